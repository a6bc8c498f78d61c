"""Bodies of the OAuth endpoints as their RFCs name them (snake_case): discovery metadata, client
registration, token requests (form-encoded) and responses, and the error body ({error,
error_description}) that OAuth clients read instead of problem+json."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from domain.people import user_sessions
from web.kernel.access import ServiceScope as Scope
from web.kernel.wire import Exact

GrantType = Literal["authorization_code", "refresh_token"]
AuthMethod = Literal["none", "client_secret_post", "client_secret_basic"]


class OAuthErrorBody(Exact):
    model_config = ConfigDict(extra="forbid", title="OAuthError")
    error: str = Field(description="The RFC's error code (invalid_grant, invalid_client, …).")
    error_description: str = Field(description="What was wrong, for the client's developer.")


class ProtectedResourceMetadata(Exact):
    """RFC 9728 §2."""

    resource: str = Field(description="The MCP endpoint's URL: the audience of the tokens.")
    authorization_servers: list[str]
    scopes_supported: list[Scope]
    bearer_methods_supported: list[Literal["header"]]
    resource_name: str
    resource_documentation: str


class AuthorizationServerMetadata(Exact):
    """RFC 8414 §2."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str
    revocation_endpoint: str
    revocation_endpoint_auth_methods_supported: list[AuthMethod]
    scopes_supported: list[Scope]
    response_types_supported: list[Literal["code"]]
    response_modes_supported: list[Literal["query"]]
    grant_types_supported: list[GrantType]
    code_challenge_methods_supported: list[Literal["S256"]]
    token_endpoint_auth_methods_supported: list[AuthMethod]
    authorization_response_iss_parameter_supported: bool = Field(description="RFC 9207: `iss` on redirects.")
    service_documentation: str


class ClientMetadata(BaseModel):
    """RFC 7591 §2. Other metadata (logo_uri, contacts…) is accepted and ignored."""

    model_config = ConfigDict(extra="allow", title="ClientMetadata")
    redirect_uris: list[str] = Field(
        min_length=1,
        max_length=10,
        description="https URLs, or http to a loopback host (localhost, 127.0.0.1, [::1]); no fragment.",
    )
    client_name: str | None = Field(default=None, max_length=200)
    grant_types: list[GrantType] | None = Field(
        default=None, description="Must include authorization_code; default both."
    )
    response_types: list[Literal["code"]] | None = None
    token_endpoint_auth_method: AuthMethod | None = Field(
        default=None, description="RFC 7591's default is client_secret_basic; public clients send none."
    )
    scope: str | None = Field(default=None, max_length=500, description="Space-separated scopes.")


class ClientInformation(Exact):
    """RFC 7591 §3.2.1; `client_secret` only for a confidential client (shown once)."""

    client_id: str
    client_id_issued_at: int
    client_secret: str | None = None
    client_secret_expires_at: int | None = Field(default=None, description="0: never.")
    client_name: str | None = None
    redirect_uris: list[str]
    grant_types: list[GrantType]
    response_types: list[Literal["code"]]
    token_endpoint_auth_method: AuthMethod
    scope: str | None = None


class TokenRequest(BaseModel):
    """RFC 6749 §4.1.3 and §6, form-encoded (each parameter once)."""

    model_config = ConfigDict(extra="forbid", title="TokenRequest")
    grant_type: GrantType
    code: str | None = Field(default=None, description="authorization_code: the code from the redirect.")
    redirect_uri: str | None = Field(default=None, description="authorization_code: as in the request.")
    code_verifier: str | None = Field(default=None, description="authorization_code: the PKCE verifier.")
    refresh_token: str | None = Field(default=None, description="refresh_token: the last one given.")
    client_id: str | None = Field(default=None, description="Unless HTTP Basic authenticates the client.")
    client_secret: str | None = Field(default=None, description="client_secret_post clients.")
    resource: str | None = Field(default=None, description="RFC 8707: this server's MCP endpoint URL.")
    scope: str | None = None


class TokenResponse(Exact):
    """RFC 6749 §5.1."""

    access_token: str = Field(description="A JWT for 'Authorization: Bearer' on /mcp (and the REST API).")
    token_type: Literal["Bearer"]
    expires_in: int
    refresh_token: str = Field(description="Used once: the next token request gets a new one.")
    scope: str = Field(
        description="The scopes granted: those asked, left ticked on the consent page and held by the "
        "person; after a refresh with scope, that narrower set."
    )

    @classmethod
    def of(cls, pair: user_sessions.TokenPair) -> TokenResponse:
        """A session's token pair as RFC 6749 §5.1 answers it."""
        return cls(
            access_token=pair.access_token,
            token_type="Bearer",
            expires_in=pair.expires_in,
            refresh_token=pair.refresh_token,
            scope=" ".join(pair.scopes),
        )


class RevokeRequest(BaseModel):
    """RFC 7009 §2.1, form-encoded, with the client's authentication as at the token endpoint."""

    model_config = ConfigDict(extra="forbid", title="RevokeRequest")
    token: str = Field(min_length=1, description="An access token or a refresh token of this client.")
    token_type_hint: Literal["access_token", "refresh_token"] | None = None
    client_id: str | None = None
    client_secret: str | None = None


class Revoked(Exact):
    """RFC 7009 §2.2: an empty object, whether or not the token was known."""


class AuthorizeForm(BaseModel):
    """The consent page's form: the authorization request again, the person's credentials, the choice."""

    model_config = ConfigDict(extra="forbid", title="AuthorizeForm")
    csrf: str
    decision: Literal["approve", "deny"]
    grant: list[str] | None = Field(
        default=None,
        description="The scopes the person leaves ticked, one field each; none on approve means deny.",
    )
    email: str | None = None
    password: str | None = None
    organisation: str | None = None
    response_type: str | None = None
    client_id: str | None = None
    redirect_uri: str | None = None
    scope: str | None = None
    state: str | None = None
    code_challenge: str | None = None
    code_challenge_method: str | None = None
    resource: str | None = None


class AuthorizeQuery(BaseModel):
    """RFC 6749 §4.1.1 with PKCE (RFC 7636) and the resource indicator (RFC 8707)."""

    model_config = ConfigDict(extra="allow")
    response_type: Literal["code"]
    client_id: str
    redirect_uri: str | None = None
    scope: str | None = None
    state: str | None = None
    code_challenge: str
    code_challenge_method: Literal["S256"]
    resource: str | None = None
