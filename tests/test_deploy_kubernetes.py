"""deploy/kubernetes/ validated offline: every manifest against the Kubernetes schemas of KUBERNETES_VERSION
(kubernetes-validate ships them; strict, so an unknown or misspelt field fails as `kubectl apply` would), the
KEDA resources against schemas derived from KEDA's CRDs (tests/schemas/), and the references between them
and the code: settings, Secret and ConfigMap keys, ports, probes, commands, the image's user, and the Redis
keys Dramatiq really gives Concord's queue."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import dramatiq
import fakeredis
import jsonschema
import kubernetes_validate  # type: ignore[import-untyped]
import pydantic
import pytest
import yaml
from dramatiq.brokers.redis import RedisBroker

from domain.kernel.settings import Settings
from tests.deploy_support import (
    DEPLOY,
    SCHEMAS,
    check_command,
    check_liveness_probe,
    dockerfile,
    dramatiq_env_names,
    load_yaml_documents,
    pyproject,
    setting_names,
    validate_settings,
    worker_options,
)
from web.docs import api as docs_api
from web.hub import api as hub_api
from workers import actors

KUBERNETES_VERSION = "1.33"  # the oldest release deploy/README.md promises; KEDA 2.20 supports 1.33+
K8S = DEPLOY / "kubernetes"
SECRET_TEMPLATE = K8S / "secret.example.yaml"
KEDA_SCHEMAS = {
    "ScaledObject": SCHEMAS / "keda.sh_scaledobjects.v1alpha1.json",
    "TriggerAuthentication": SCHEMAS / "keda.sh_triggerauthentications.v1alpha1.json",
}


def manifest_files() -> list[Path]:
    return sorted(p for p in K8S.rglob("*.yaml") if p.name != "kustomization.yaml")


def kustomizations() -> list[Path]:
    return sorted(K8S.rglob("kustomization.yaml"))


def resources() -> list[dict[str, Any]]:
    return [doc for path in manifest_files() for doc in load_yaml_documents(path)]


def of_kind(kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for doc in resources() if doc["kind"] == kind}


def pod_specs() -> Iterator[tuple[str, dict[str, Any]]]:
    for doc in resources():
        if doc["kind"] in ("Deployment", "Job"):
            yield doc["metadata"]["name"], doc["spec"]["template"]["spec"]


def containers() -> Iterator[tuple[str, dict[str, Any]]]:
    for name, spec in pod_specs():
        for container in [*spec.get("initContainers", []), *spec["containers"]]:
            yield f"{name}/{container['name']}", container


def config() -> dict[str, str]:
    (configmap,) = of_kind("ConfigMap").values()
    return dict(configmap["data"])


def secret() -> dict[str, str]:
    (template,) = load_yaml_documents(SECRET_TEMPLATE)
    return dict(template["stringData"])


def worker_command() -> list[str]:
    deployment = of_kind("Deployment")["concord-worker"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return list(container["command"])


# --- schemas -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", manifest_files(), ids=lambda p: str(p.relative_to(K8S)))
def test_manifest_matches_its_schema(path: Path):
    for doc in load_yaml_documents(path):
        if doc["kind"] in KEDA_SCHEMAS:
            schema = json.loads(KEDA_SCHEMAS[doc["kind"]].read_text())
            jsonschema.Draft202012Validator.check_schema(schema)
            jsonschema.Draft202012Validator(schema).validate(doc)
        else:
            assert kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True) == KUBERNETES_VERSION


def test_strict_schemas_refuse_unknown_fields():
    """The validation is worth something only if a misspelt field fails, in both kinds of schema."""
    deployment = of_kind("Deployment")["concord-web"]
    deployment["spec"]["template"]["spec"]["containers"][0]["livenesProbes"] = {}
    with pytest.raises(kubernetes_validate.ValidationError, match="livenesProbes"):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSION, strict=True)
    scaled = of_kind("ScaledObject")["concord-worker"]
    scaled["spec"]["minReplicas"] = 1
    scaled["spec"]["triggers"][0]["metadata"]["listLength"] = 8  # KEDA takes strings only
    schema = json.loads(KEDA_SCHEMAS["ScaledObject"].read_text())
    errors = {e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(scaled)}
    assert any("minReplicas" in e for e in errors)
    assert any("is not of type 'string'" in e for e in errors)


def test_kustomizations_list_every_manifest_and_agree():
    listed: set[Path] = set()
    images, namespaces = [], set()
    for path in kustomizations():
        (kustomization,) = load_yaml_documents(path)
        for name in kustomization["resources"]:
            assert (path.parent / name).is_file(), f"{path}: {name} does not exist"
            listed.add((path.parent / name).resolve())
        images.append(kustomization["images"])
        namespaces.add(kustomization["namespace"])
    # The Secret template stays out on purpose (applying it would overwrite the real Secret).
    assert {p.resolve() for p in manifest_files()} - listed == {SECRET_TEMPLATE.resolve()}
    assert len(kustomizations()) == 2
    assert images[0] == images[1], "the Job and the Deployments share an image"
    assert {image["name"] for image in images[0]} == {"concord"}
    assert {c["image"] for _, c in containers()} == {"concord"}
    (namespace,) = namespaces
    assert set(of_kind("Namespace")) == {namespace}
    assert {doc["metadata"].get("namespace") for doc in resources() if doc["kind"] != "Namespace"} == {
        namespace
    }


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl (with its kustomize) is not installed")
def test_kustomize_builds_valid_manifests():
    """What `kubectl apply -k` sends: still valid, every container on the image its kustomization names."""
    for path in kustomizations():
        (image,) = load_yaml_documents(path)[0]["images"]
        built = subprocess.run(
            ["kubectl", "kustomize", str(path.parent)], capture_output=True, text=True, check=True, timeout=60
        ).stdout
        for doc in (d for d in yaml.safe_load_all(built) if d["kind"] not in KEDA_SCHEMAS):
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
            if doc["kind"] in ("Deployment", "Job"):
                spec = doc["spec"]["template"]["spec"]
                for container in [*spec.get("initContainers", []), *spec["containers"]]:
                    assert container["image"] == f"{image['newName']}:{image['newTag']}"


# --- settings, ConfigMap and Secret --------------------------------------------------------------------


def test_every_env_var_is_a_setting_and_every_reference_resolves():
    names = setting_names()
    configmaps, secrets = of_kind("ConfigMap"), {"concord-secrets": secret()}
    unknown = set(config()) - set(names)
    assert unknown == set(), f"ConfigMap keys that are no Concord setting: {sorted(unknown)}"
    for where, container in containers():
        for source in container.get("envFrom", []):
            assert source["configMapRef"]["name"] in configmaps, where
        for var in container.get("env", []):
            assert var["name"] in names or var["name"] in dramatiq_env_names(), f"{where}: {var['name']}"
            ref = var.get("valueFrom", {}).get("secretKeyRef")
            if ref is not None:
                assert ref["name"] in secrets, where
                assert ref["key"] in secrets[ref["name"]], f"{where}: no key {ref['key']} in the Secret"
                assert ref["key"] == var["name"], "Secret keys are named after the setting they hold"


def test_config_and_secret_template_are_valid_settings():
    validate_settings({**config(), **secret(), "CONCORD_JWT_SECRET": "x" * 32})
    # The JWT placeholder is short on purpose: a Secret applied unedited stops the web pods at start.
    with pytest.raises(pydantic.ValidationError, match="jwt_secret"):
        validate_settings({**config(), **secret()})
    # Every credential in the template is a visible placeholder, never something that could pass for real.
    credentials = {k: v for k, v in secret().items() if v and k != "keda-redis-address"}
    assert credentials
    assert all("CHANGE-ME" in v for v in credentials.values()), credentials


def test_each_process_gets_only_the_secrets_it_uses():
    wanted = {
        "concord-web/web": {
            "CONCORD_DATABASE_URL",
            "CONCORD_REDIS_URL",
            "CONCORD_JWT_SECRET",
            "CONCORD_SMTP_URL",
            "CONCORD_METRICS_TOKEN",
        },
        "concord-worker/worker": {"CONCORD_DATABASE_URL", "CONCORD_REDIS_URL", "CONCORD_METRICS_TOKEN"},
        "concord-scheduler/scheduler": {"CONCORD_DATABASE_URL", "CONCORD_REDIS_URL", "CONCORD_METRICS_TOKEN"},
        "concord-migrate/migrate": {"CONCORD_DATABASE_URL"},
        "concord-migrate/seed": {"CONCORD_DATABASE_URL"},
    }
    got = {
        where: {v["name"] for v in c.get("env", []) if "secretKeyRef" in v.get("valueFrom", {})}
        for where, c in containers()
    }
    assert got == wanted


# --- web: ports, Services, probes ----------------------------------------------------------------------


def web_pod() -> dict[str, Any]:
    return of_kind("Deployment")["concord-web"]["spec"]["template"]


def test_ports_agree_with_settings_image_and_services():
    ports = {p["name"]: p["containerPort"] for p in web_pod()["spec"]["containers"][0]["ports"]}
    settings = Settings.model_validate(
        {"hub_port": config()["CONCORD_HUB_PORT"], "docs_port": config()["CONCORD_DOCS_PORT"]}
    )
    assert ports == {"hub": settings.hub_port, "docs": settings.docs_port}
    assert set(ports.values()) == dockerfile().exposed
    services = of_kind("Service")
    assert {name: [p["targetPort"] for p in s["spec"]["ports"]] for name, s in services.items()} == {
        "concord-hub": ["hub"],
        "concord-docs": ["docs"],
    }
    for service in services.values():
        assert service["spec"]["selector"].items() <= web_pod()["metadata"]["labels"].items()
    # MCP is served statelessly (docs/mcp.md): any pod answers any request, no affinity to keep.
    assert all("sessionAffinity" not in s["spec"] for s in services.values())
    assert config()["CONCORD_WEB_PROCESSES"] == "1"


def test_probes_use_the_health_routes_of_the_app_on_that_port():
    container = web_pod()["spec"]["containers"][0]
    apps = {"hub": hub_api.ROUTE_MODULES, "docs": docs_api.ROUTE_MODULES}
    probes = {
        kind: container[kind]["httpGet"] for kind in ("startupProbe", "readinessProbe", "livenessProbe")
    }
    assert probes["readinessProbe"]["path"] == "/readyz"  # the database answers (Redis is reported)
    assert probes["livenessProbe"]["path"] == "/healthz"  # the process answers
    # /readyz waits up to CONCORD_REDIS_TIMEOUT_SECONDS for a hanging Redis, then answers 200: a probe that
    # gave up sooner would take every pod out of the Services while Redis hangs, as if they were not ready.
    redis_timeout = Settings.model_validate(
        {"redis_timeout_seconds": config()["CONCORD_REDIS_TIMEOUT_SECONDS"]}
        if "CONCORD_REDIS_TIMEOUT_SECONDS" in config()
        else {}
    ).redis_timeout_seconds
    assert container["readinessProbe"]["timeoutSeconds"] >= redis_timeout + 2
    for probe in probes.values():
        paths = {
            op.path for module in apps[probe["port"]] for op in module.routes.operations if op.method == "GET"
        }
        assert probe["path"] in paths


def test_selectors_match_their_pods():
    for name, deployment in of_kind("Deployment").items():
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items(), name
    (pdb,) = of_kind("PodDisruptionBudget").values()
    assert pdb["spec"]["selector"]["matchLabels"].items() <= web_pod()["metadata"]["labels"].items()


# --- worker metrics ------------------------------------------------------------------------------------


def test_a_worker_pod_serves_the_samples_of_all_its_processes():
    """Every worker process writes to CONCORD_METRICS_DIR, an in-memory emptyDir of the pod (shared by its
    processes, empty when the pod starts), and the group's metrics process (`concord worker --metrics`)
    serves their sum on the port the pod declares and the scrape annotation names, on an address Prometheus
    reaches. tests/test_worker_group.py runs such a group and scrapes it."""
    pod = of_kind("Deployment")["concord-worker"]["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    parsed = worker_options(worker_command())
    assert parsed.processes > 1, "several processes: the case the shared directory is for"
    assert parsed.metrics
    env = {v["name"]: v["value"] for v in container["env"] if "value" in v}
    settings = Settings.model_validate(
        {"metrics_dir": env["CONCORD_METRICS_DIR"], "metrics_port": env["CONCORD_METRICS_PORT"]}
    )
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == {"metrics": settings.metrics_port}
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == str(settings.metrics_port)
    assert config()["CONCORD_HOST"] == "0.0.0.0"  # the metrics process listens on CONCORD_HOST
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    directory = volumes[mounts[str(settings.metrics_dir)]]
    assert directory["emptyDir"]["medium"] == "Memory"
    # The web pods run one process each and count on their own; the token guards both kinds alike.
    web = web_pod()["spec"]["containers"][0]
    assert "CONCORD_METRICS_DIR" not in {v["name"] for v in web["env"]}
    assert config()["CONCORD_WEB_PROCESSES"] == "1"


def test_a_scheduler_pod_serves_its_sweep_metrics():
    """`concord scheduler` serves /metrics on CONCORD_METRICS_PORT (tests/test_observability.py scrapes it):
    the pod declares that port and the scrape annotation names it, with the token as on the other pods."""
    pod = of_kind("Deployment")["concord-scheduler"]["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    assert container["command"] == ["concord", "scheduler"]
    env = {v["name"]: v for v in container["env"]}
    port = Settings.model_validate({"metrics_port": env["CONCORD_METRICS_PORT"]["value"]}).metrics_port
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == {"metrics": port}
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == str(port)
    assert env["CONCORD_METRICS_TOKEN"]["valueFrom"]["secretKeyRef"]["optional"] is True


# --- commands, image, security -------------------------------------------------------------------------


def test_commands_are_ones_the_image_runs():
    commands = {where: c["command"] for where, c in containers()}
    assert commands["concord-web/web"] == ["concord", "web"]
    assert commands["concord-scheduler/scheduler"] == ["concord", "scheduler"]
    assert commands["concord-migrate/migrate"] == ["concord", "migrate"]
    assert commands["concord-migrate/seed"] == ["concord", "seed"]
    for command in commands.values():
        check_command(command)


def test_image_copies_every_package_it_installs():
    project = pyproject()
    packages = {p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    modules = {f"{m}.py" for m in project["tool"]["setuptools"]["py-modules"]}
    assert packages | modules | {"pyproject.toml"} <= dockerfile().copied
    copies = dockerfile().copies
    assert sorted(copies) == sorted(set(copies)), copies  # each once: a second copy is a layer for nothing
    assert dockerfile().healthcheck_port == Settings().hub_port


def test_pods_run_as_the_image_user_without_privileges():
    uid, gid = dockerfile().user
    assert uid != 0
    for name, spec in pod_specs():
        security = spec["securityContext"]
        assert security["runAsNonRoot"] is True, name
        assert (security["runAsUser"], security["runAsGroup"]) == (uid, gid), name
        assert spec["automountServiceAccountToken"] is False, name
        mounts_by_volume = {v["name"]: v for v in spec["volumes"]}
        for container in [*spec.get("initContainers", []), *spec["containers"]]:
            sc = container["securityContext"]
            assert sc["readOnlyRootFilesystem"] is True, name
            assert sc["allowPrivilegeEscalation"] is False, name
            assert sc["capabilities"]["drop"] == ["ALL"], name
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            assert "emptyDir" in mounts_by_volume[mounts["/tmp"]], f"{name}: a writable /tmp"


def test_blob_volume_is_the_data_dir_and_shared():
    data_dir = config()["CONCORD_DATA_DIR"]
    assert data_dir == dockerfile().env["CONCORD_DATA_DIR"]
    (claim,) = of_kind("PersistentVolumeClaim").values()
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"], (
        "web writes blobs that workers on other nodes read"
    )
    for name in ("concord-web", "concord-worker", "concord-scheduler"):
        spec = of_kind("Deployment")[name]["spec"]["template"]["spec"]
        claims = {
            v["name"]: v["persistentVolumeClaim"]["claimName"]
            for v in spec["volumes"]
            if "persistentVolumeClaim" in v
        }
        mounts = {m["mountPath"]: m["name"] for m in spec["containers"][0]["volumeMounts"]}
        assert claims[mounts[data_dir]] == claim["metadata"]["name"], name
        assert spec["securityContext"]["fsGroup"] == dockerfile().user[1], name


def test_cpu_requests_match_the_processes_a_pod_runs():
    web = web_pod()["spec"]["containers"][0]["resources"]["requests"]
    assert int(web["cpu"]) == int(config()["CONCORD_WEB_PROCESSES"])
    worker = of_kind("Deployment")["concord-worker"]["spec"]["template"]["spec"]["containers"][0]
    assert int(worker["resources"]["requests"]["cpu"]) == worker_options(worker_command()).processes


def _bytes(quantity: str) -> int:
    units = {"Mi": 2**20, "Gi": 2**30}
    return int(quantity[:-2]) * units[quantity[-2:]]


def test_a_worker_pod_is_given_the_memory_it_may_use():
    """The memory limit holds every thread converting at once (each conversion is limited to
    CONCORD_CONVERT_MEMORY_MB) plus the worker processes, and the request is the limit: a pod that requests
    less lets busy workers overcommit their node, and the out-of-memory killer then picks among them."""
    pod = of_kind("Deployment")["concord-worker"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    options = worker_options(container["command"])
    env = {v["name"]: v.get("value") for v in container["env"]}
    conversion = Settings.model_validate({"convert_memory_mb": env["CONCORD_CONVERT_MEMORY_MB"]})
    resources = container["resources"]
    limit = _bytes(resources["limits"]["memory"])
    assert options.processes * (options.threads * conversion.convert_memory_mb + 300) * 2**20 <= limit
    assert _bytes(resources["requests"]["memory"]) == limit


def test_a_worker_pod_is_alive_while_its_groups_parent_runs():
    """The liveness probe runs workers.liveness on the file `concord worker --alive-file` keeps fresh, on a
    writable volume (the root file system is read-only); the group restarts its own worker processes, so a
    probe that fails means the parent hangs. A stopping group keeps the file fresh until it exits, which the
    grace period outlasts."""
    from workers.group import STOP_MARGIN_SECONDS

    pod = of_kind("Deployment")["concord-worker"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    options = worker_options(container["command"])
    assert options.alive_file is not None
    probe = container["livenessProbe"]
    bound = check_liveness_probe(probe["exec"]["command"], str(options.alive_file))
    assert probe["periodSeconds"] * probe["failureThreshold"] >= bound
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes[mounts[str(options.alive_file.parent)]]
    assert options.shutdown_timeout + STOP_MARGIN_SECONDS < pod["terminationGracePeriodSeconds"]


# --- KEDA and the Redis keys ---------------------------------------------------------------------------


def concord_queue_keys(namespace: str) -> tuple[set[str], dict[str, str]]:
    """Concord's queues, and the Redis keys (with their types) that Dramatiq's real Redis broker and Lua
    script (on fakeredis) create for them: two messages per actor, one delayed like a retry, one fetched
    and dead-lettered like a job whose retries ran out."""
    client = fakeredis.FakeRedis()
    broker = RedisBroker(client=client, namespace=namespace)
    for actor in actors.declare(broker, Settings()).values():
        for delay in (None, 60_000):
            message: dramatiq.Message[Any] = dramatiq.Message(
                queue_name=actor.queue_name, actor_name=actor.actor_name, args=("job",), kwargs={}, options={}
            )
            broker.enqueue(message, delay=delay)
    queues = broker.get_declared_queues()
    for queue in queues:
        consumer = broker.consume(queue, prefetch=1, timeout=100)
        fetched = next(consumer)
        assert fetched is not None
        consumer.nack(fetched)
    return queues, {_text(key): _text(client.type(key)) for key in client.keys(f"{namespace}:*")}


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def test_scaled_object_targets_the_worker_deployment():
    (scaled,) = of_kind("ScaledObject").values()
    spec = scaled["spec"]
    target = spec["scaleTargetRef"]
    assert (target.get("apiVersion", "apps/v1"), target.get("kind", "Deployment")) == (
        "apps/v1",
        "Deployment",
    )
    worker = of_kind("Deployment")[target["name"]]
    assert "replicas" not in worker["spec"], "KEDA owns the worker count; a fixed one would fight it"
    assert worker["spec"]["template"]["spec"]["containers"][0]["command"][:2] == ["concord", "worker"]
    # The CRD's own rule (a CEL validation the derived schema leaves to the API server).
    assert 1 <= spec["minReplicaCount"] <= spec["maxReplicaCount"]


def test_scaled_object_counts_the_keys_concords_queue_really_uses():
    namespace = config()["CONCORD_QUEUE_NAMESPACE"]
    queues, keys = concord_queue_keys(namespace)
    assert queues == {"default"}, "deploy/README.md and the ScaledObject name the queue default"
    worker_options(worker_command())  # `concord worker` consumes every queue the broker declares
    (scaled,) = of_kind("ScaledObject").values()
    watched = {t["metadata"]["listName"] for t in scaled["spec"]["triggers"] if t["type"] == "redis"}
    # <namespace>:<queue>.msgs holds every message not yet acknowledged: waiting, held or running.
    assert watched == {f"{namespace}:{queue}.msgs" for queue in queues}
    for queue in queues:
        assert keys[f"{namespace}:{queue}.msgs"] == "hash"
        assert keys[f"{namespace}:{queue}"] == "list"  # the backlog (LLEN)
        assert keys[f"{namespace}:{queue}.DQ"] == "list"  # retries waiting for their time
        assert keys[f"{namespace}:{queue}.XQ"] == "zset"  # dead letters


def test_scaling_target_is_one_pod_of_work_and_workers_hold_no_spare_jobs():
    command = worker_command()
    options = worker_options(command)
    per_pod = options.processes * options.threads
    (scaled,) = of_kind("ScaledObject").values()
    (trigger,) = scaled["spec"]["triggers"]
    assert int(trigger["metadata"]["listLength"]) == per_pod
    worker = of_kind("Deployment")["concord-worker"]["spec"]["template"]["spec"]["containers"][0]
    env = {v["name"]: v.get("value") for v in worker["env"]}
    assert int(env["dramatiq_queue_prefetch"]) == options.threads


def test_keda_reaches_the_same_redis_as_concord():
    (scaled,) = of_kind("ScaledObject").values()
    (trigger,) = scaled["spec"]["triggers"]
    auth = of_kind("TriggerAuthentication")[trigger["authenticationRef"]["name"]]
    refs = {r["parameter"]: r for r in auth["spec"]["secretTargetRef"]}
    values = secret()
    for ref in refs.values():
        assert ref["name"] == "concord-secrets"
        assert ref["key"] in values
    url = urlsplit(values["CONCORD_REDIS_URL"])
    assert values[refs["address"]["key"]] == f"{url.hostname}:{url.port}"
    assert values[refs["password"]["key"]] == (url.password or "")
    assert trigger["metadata"]["databaseIndex"] == (url.path.strip("/") or "0")


def test_readme_names_the_real_keys():
    guide = (DEPLOY / "README.md").read_text()
    namespace = config()["CONCORD_QUEUE_NAMESPACE"]
    for key in (
        f"{namespace}:default",
        f"{namespace}:default.msgs",
        f"{namespace}:default.XQ",
        f"{namespace}:default.DQ",
    ):
        assert f"`{key}`" in guide
    assert "kubectl apply -k deploy/kubernetes/migrate" in guide
