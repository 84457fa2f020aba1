"""The API page: make and revoke tokens, read how to use them."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from studio.api.models import ApiToken
from studio.api.selectors import token_list_for
from studio.api.services import token_create, token_revoke


def _render(request: HttpRequest, clear: str | None = None) -> HttpResponse:
    context = {
        "tokens": token_list_for(user=request.user),  # type: ignore[arg-type]
        "new_token": clear,
        "base_url": request.build_absolute_uri("/").rstrip("/"),
    }
    template = "api/_token-list.html" if request.headers.get("HX-Request") else "api/tokens.html"
    return render(request, template, context)


@require_GET
@login_required
@vary_on_headers("HX-Request")
def tokens(request: HttpRequest) -> HttpResponse:
    return _render(request)


@require_POST
@login_required
@vary_on_headers("HX-Request")
def token_new(request: HttpRequest) -> HttpResponse:
    name = request.POST.get("name", "")[:120]
    _, clear = token_create(user=request.user, name=name)  # type: ignore[arg-type]
    response = _render(request, clear)
    response["Cache-Control"] = "no-store"  # the clear token must not be cached anywhere
    return response


@require_POST
@login_required
@vary_on_headers("HX-Request")
def token_revoke_view(request: HttpRequest, token_id: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, pk=token_id, user=request.user)
    token_revoke(token=token)
    return _render(request)
