"""HTML of the OAuth sign-in and consent page, in the apps' own layout and stylesheet (web/kernel/html.py):
who asks (the client's name, which it chose itself, and the host it sends the person back to), what it
asks for (a checkbox per scope, ticked unless the person unticked it), the person's email and password,
and the choice. No script; every value is escaped."""

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
    ticked: list[str] | None = None,
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> web.Response:
    name = req.client.client_name or "An application without a name"
    host = urlsplit(req.redirect_uri).netloc
    chosen = req.scopes if ticked is None else ticked
    # The checkboxes sit where the list always was, tied to the form below by its id (HTML `form`).
    scopes = join(
        h(
            '<li><input type="checkbox" form="consent" id="grant-{n}" name="grant" value="{s}"{on}>'
            '<label for="grant-{n}"><code>{s}</code>: {words}</label></li>',
            n=n,
            s=s,
            words=SCOPE_WORDS.get(s, s),
            on=Markup(" checked") if s in chosen else Markup(""),
        )
        for n, s in enumerate(req.scopes)
    )
    alert = h('<div class="error" role="alert"><p>{e}</p></div>', e=error) if error else Markup("")
    body = h(
        """<h1>Allow {name} to use Concord for you?</h1>
{alert}
<dl class="facts">
<dt>Application</dt><dd>{name}</dd>
<dt>Sends you back to</dt><dd class="mono">{host}</dd>
</dl>
<fieldset>
<legend>It asks to act as you on the documents of your organisation and to:</legend>
<ul class="choices">{scopes}</ul>
</fieldset>
<p class="hint">Untick what you do not want to allow. It gets only the ticked ones that you hold yourself.
The application registered itself: approve only if you started this sign-in from it.</p>
<form class="decision" id="consent" method="post" action="/oauth/authorize">
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


def refusal(title: str, text: str, status: int, *, error: str | None = None) -> web.Response:
    """A page saying why; with `error`, the OAuth error code of a refused request, for its developer."""
    code = (
        h(
            '<p class="hint">Error <code>{e}</code>. Nothing was sent back to the application: start again '
            "from it.</p>",
            e=error,
        )
        if error
        else Markup("")
    )
    body = h('<h1>{t}</h1><div class="error" role="alert"><p>{x}</p></div>{c}', t=title, x=text, c=code)
    return page(title, body, site=SITE, status=status, no_store=True)
