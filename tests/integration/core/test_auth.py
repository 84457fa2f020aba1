from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db


def test_it_redirects_anonymous_users_to_the_login_page(client: Client):
    for url in ["/", "/status/"]:
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/login/")


def test_it_signs_in_and_shows_the_status_page(client: Client):
    get_user_model().objects.create_user("alice", "", "correct-horse-9")

    response = client.post("/login/", {"username": "alice", "password": "correct-horse-9"})
    assert response.status_code == 302

    page = client.get("/status/").content.decode()
    assert "Channel layer" in page and "World model" in page
    assert 'ws-connect="/ws/status/"' in page


def test_it_rejects_a_wrong_password(client: Client):
    get_user_model().objects.create_user("alice", "", "correct-horse-9")

    response = client.post("/login/", {"username": "alice", "password": "nope"})

    assert response.status_code == 200
    assert "didn't match" in response.content.decode()


def test_bootstrap_creates_one_local_account_with_a_random_password(settings, capsys):
    call_command("bootstrap", "--no-examples")
    call_command("bootstrap", "--no-examples")

    users = get_user_model().objects.all()
    assert users.count() == 1
    login_file = settings.VAR_DIR / "first-login.txt"
    username, password = (line.split(": ", 1)[1] for line in login_file.read_text().splitlines())
    assert users[0].username == username
    assert users[0].check_password(password)
    assert oct(login_file.stat().st_mode & 0o777) == "0o600"
    assert users[0].projects.filter(slug="sandbox").exists()
    assert f"password: {password}" in capsys.readouterr().out


def test_logout_signs_out(client: Client):
    user = get_user_model().objects.create_user("alice", "", "correct-horse-9")
    client.force_login(user)

    client.post("/logout/")

    assert client.get("/").status_code == 302
