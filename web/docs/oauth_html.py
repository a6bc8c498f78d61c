"""HTML of the OAuth sign-in and consent page, in the apps' own layout and stylesheet (web/kernel/html.py):
who asks (the client's name, which it chose itself, and the host it sends the person back to), what it
asks for, the person's email and password, and the choice. No script; every value is escaped."""

from __future__ import annotations

from urllib.parse import urlsplit

from aiohttp import web

from domain.people.oauth_grants import AuthorizationRequest
from web.kernel.html import Markup, h, join, page

SITE = "Concord documents"
SCOPE_WORDS = {
    "documents:read": "list your organisation's documents and their details",
    "documents:write": "upload documents and change their details",
    "comments:read": "read comments",
    "comments:write": "write and resolve comments",
    "tap:read": "read documents' content, sections, proposals and what other agents do",
    "tap:write": "join documents as an agent: propose, vote, lock sections and escalate",
}


def _hidden(fields: dict[str, str]) -> Markup:
    return join(h('<input type="hidden" name="{n}" value="{v}">', n=n, v=v) for n, v in fields.items())


def consent(
    req: AuthorizationRequest,
    csrf: str,
    *,
    error: str | None = None,
    email: str = "",
    organisation: str = "",
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> web.Response:
    name = req.client.client_name or "An application without a name"
    host = urlsplit(req.redirect_uri).netloc
    scopes = join(
        h("<li><code>{s}</code>: {words}</li>", s=s, words=SCOPE_WORDS.get(s, s)) for s in req.scopes
    )
    alert = h('<div class="error" role="alert"><p>{e}</p></div>', e=error) if error else Markup("")
    body = h(
        """<h1>Allow {name} to use Concord for you?</h1>
{alert}
<dl class="facts">
<dt>Application</dt><dd>{name}</dd>
<dt>Sends you back to</dt><dd class="mono">{host}</dd>
</dl>
<p>It asks to act as you on the documents of your organisation and to:</p>
<ul>{scopes}</ul>
<p class="hint">It gets only those of these that you hold yourself. The application registered itself:
approve only if you started this sign-in from it.</p>
<form class="decision" method="post" action="/oauth/authorize">
<h2>Sign in to decide</h2>
{hidden}
<div class="field"><label for="email">Email</label>
<input type="text" id="email" name="email" autocomplete="username" value="{email}" required></div>
<div class="field"><label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required></div>
<div class="field"><label for="organisation">Organisation (optional)</label>
<p class="hint" id="organisation-hint">Only when your address belongs to several organisations.</p>
<input type="text" id="organisation" name="organisation" value="{organisation}"
 aria-describedby="organisation-hint"></div>
<p><button type="submit" name="decision" value="approve">Sign in and allow</button>
<button type="submit" class="secondary" name="decision" value="deny" formnovalidate>Deny</button></p>
</form>""",
        name=name,
        alert=alert,
        host=host,
        scopes=scopes,
        hidden=_hidden({"csrf": csrf, **req.params()}),
        email=email,
        organisation=organisation,
    )
    return page(f"Allow {name}", body, site=SITE, status=status, headers=headers, no_store=True)


def refusal(title: str, text: str, status: int) -> web.Response:
    body = h('<h1>{t}</h1><div class="error" role="alert"><p>{x}</p></div>', t=title, x=text)
    return page(title, body, site=SITE, status=status, no_store=True)
