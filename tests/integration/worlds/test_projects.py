from __future__ import annotations

from studio.core.models import Membership, Project


def test_creating_a_project_makes_its_creator_owner(people, client):
    client.force_login(people.users["viewer"])
    response = client.post("/projects/new/", {"name": "Cartography Lab", "description": "maps"})
    project = Project.objects.get(slug="cartography-lab")
    assert response["Location"] == "/projects/cartography-lab/"
    assert Membership.objects.get(project=project).role == "owner"
    assert client.post("/projects/new/", {"name": "Cartography Lab"}).status_code == 400
    assert "Cartography Lab" in client.get("/projects/").content.decode()


def test_owners_manage_members_with_htmx(people, client):
    client.force_login(people.users["owner"])
    base = "/projects/alpha/members"
    fragment = client.post(
        f"{base}/add", {"username": "outsider", "role": "editor"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert fragment.startswith('<div id="members"') and "outsider" in fragment
    added = Membership.objects.get(project=people.project, user=people.users["outsider"])
    assert added.role == "editor"

    assert (
        "No user called"
        in client.post(
            f"{base}/add", {"username": "nobody", "role": "viewer"}, HTTP_HX_REQUEST="true"
        ).content.decode()
    )
    client.post(f"{base}/{added.pk}/role", {"role": "viewer"}, HTTP_HX_REQUEST="true")
    added.refresh_from_db()
    assert added.role == "viewer"
    client.post(f"{base}/{added.pk}/remove", HTTP_HX_REQUEST="true")
    assert not Membership.objects.filter(pk=added.pk).exists()


def test_a_project_keeps_at_least_one_owner(people, client):
    client.force_login(people.users["owner"])
    mine = people.membership("owner")
    page = client.post(
        f"/projects/alpha/members/{mine.pk}/role", {"role": "viewer"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "at least one owner" in page
    client.post(f"/projects/alpha/members/{mine.pk}/remove")
    mine.refresh_from_db()
    assert mine.role == "owner"


def test_members_of_another_project_cannot_be_touched_through_this_one(people, client):
    client.force_login(people.users["owner"])
    foreign = Membership.objects.get(project=people.other)
    assert client.post(f"/projects/alpha/members/{foreign.pk}/remove").status_code == 404
    assert Membership.objects.filter(pk=foreign.pk).exists()
