"""deploy/docker-compose.yml validated offline against the Compose Specification's JSON schema (vendored in
tests/schemas/compose-spec.json, see tests/schemas/README.md), and against the code: every variable a
Concord setting, every command one the image runs, volumes, ports and the image's health check."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest

from domain.kernel.settings import Settings
from tests.deploy_support import (
    DEPLOY,
    SCHEMAS,
    check_command,
    check_liveness_probe,
    dockerfile,
    dramatiq_env_names,
    load_yaml_documents,
    setting_names,
    validate_settings,
    worker_options,
)

COMPOSE = DEPLOY / "docker-compose.yml"


def compose() -> dict[str, Any]:
    (doc,) = load_yaml_documents(COMPOSE)  # PyYAML resolves the x-concord anchor and `<<` merges
    return doc


def concord_services() -> dict[str, dict[str, Any]]:
    """The services built from deploy/Dockerfile."""
    return {name: s for name, s in compose()["services"].items() if "build" in s}


def test_compose_file_matches_the_compose_spec():
    schema = json.loads((SCHEMAS / "compose-spec.json").read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    jsonschema.Draft7Validator(schema).validate(compose())


def test_the_schema_refuses_a_misspelt_key():
    schema = json.loads((SCHEMAS / "compose-spec.json").read_text())
    broken = compose()
    broken["services"]["web"]["comand"] = broken["services"]["web"].pop("command")
    with pytest.raises(jsonschema.ValidationError, match="comand"):
        jsonschema.Draft7Validator(schema).validate(broken)


def test_every_process_kind_runs_from_the_image():
    services = concord_services()
    assert set(services) == {"migrate", "web", "worker", "scheduler"}
    for name, service in services.items():
        assert (DEPLOY / service["build"]["context"] / service["build"]["dockerfile"]).resolve() == (
            DEPLOY / "Dockerfile"
        ).resolve(), name
        check_command(service["command"])
    assert services["web"]["command"] == ["concord", "web"]
    assert services["scheduler"]["command"] == ["concord", "scheduler"]
    assert services["worker"]["command"][:2] == ["concord", "worker"]


def test_environment_is_concord_settings_pointing_at_the_stack():
    names = setting_names()
    services = compose()["services"]
    for name, service in concord_services().items():
        env = {k: str(v) for k, v in service["environment"].items()}
        unknown = set(env) - set(names) - dramatiq_env_names()
        assert unknown == set(), f"{name}: not Concord settings: {sorted(unknown)}"
        validate_settings(env)
        for url in (env["CONCORD_DATABASE_URL"], env["CONCORD_REDIS_URL"]):
            assert urlsplit(url).hostname in services, f"{name}: {url} names no service"


def test_volumes_ports_and_health_checks_agree_with_the_image():
    image = dockerfile()
    defaults = Settings()
    for name, service in concord_services().items():
        mounts = {v.split(":")[1]: v.split(":")[0] for v in service["volumes"]}
        assert mounts[image.env["CONCORD_DATA_DIR"]] in compose()["volumes"], (
            f"{name}: blobs on a named volume"
        )
        # The image's HEALTHCHECK asks the hub port: only the web service answers it; a worker group's is
        # its alive file.
        if service["command"] == ["concord", "web"]:
            assert "healthcheck" not in service
        elif service["command"][:2] == ["concord", "worker"]:
            alive = worker_options(service["command"]).alive_file
            assert alive is not None
            check = service["healthcheck"]["test"]
            assert check[0] == "CMD"
            check_liveness_probe(check[1:], str(alive))
        else:
            assert service["healthcheck"] == {"disable": True}, name
    published = {int(p.split(":")[1]) for p in compose()["services"]["web"]["ports"]}
    assert published == {defaults.hub_port, defaults.docs_port} == image.exposed


def test_a_web_service_reached_directly_trusts_no_proxy_header():
    """The web service publishes its ports itself, so clients reach it with no proxy in between: a trusted
    proxy header would be the client's own, and whatever address it wrote would be the one rate limits count
    and access lines show."""
    web = compose()["services"]["web"]
    assert web["ports"]
    assert "CONCORD_TRUSTED_PROXY_HEADER" not in web["environment"]


def test_the_worker_service_serves_the_samples_of_all_its_processes():
    worker = compose()["services"]["worker"]
    assert worker_options(worker["command"]).metrics
    env = {k: str(v) for k, v in worker["environment"].items()}
    settings = Settings.model_validate(
        {"metrics_dir": env["CONCORD_METRICS_DIR"], "metrics_port": env["CONCORD_METRICS_PORT"]}
    )
    assert str(settings.metrics_dir) in worker["tmpfs"]  # shared by its processes, empty at each start
    assert env["CONCORD_DATABASE_URL"] == compose()["services"]["web"]["environment"]["CONCORD_DATABASE_URL"]
    assert {int(p.split(":")[1]) for p in worker["ports"]} == {settings.metrics_port}
    assert dockerfile().env["CONCORD_HOST"] == "0.0.0.0"  # where the metrics process listens
