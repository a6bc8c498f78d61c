"""Derive the JSON Schema that tests/test_deploy_kubernetes.py validates a custom resource against from the
CustomResourceDefinition that defines it (its `openAPIV3Schema`), so that a KEDA upgrade is one command:

    python tests/schemas/crd_to_json_schema.py keda.sh_scaledobjects.yaml SOURCE > tests/schemas/X.json

What changes on the way, each to make offline validation as strict as `kubectl apply` (which refuses unknown
fields since Kubernetes 1.27's strict field validation):
- an object that lists its properties and neither `additionalProperties` nor
  `x-kubernetes-preserve-unknown-fields` gets `additionalProperties: false`;
- apiVersion and kind become constants (the group/version and kind the CRD serves);
- `status` is dropped (a manifest never sets it), and the `x-kubernetes-*` extensions with it: the API server
  checks those CEL rules and list types, and the deploy test checks the one that matters (min <= max);
- `x-kubernetes-int-or-string` keeps the `anyOf: [integer, string]` the generator already writes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml


def strict(node: Any) -> Any:
    if isinstance(node, list):
        return [strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: strict(v) for k, v in node.items() if not k.startswith("x-kubernetes-")}
    if (
        "properties" in node
        and "additionalProperties" not in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def derive(crd: dict[str, Any], source: str) -> dict[str, Any]:
    (version,) = [v for v in crd["spec"]["versions"] if v.get("storage")]
    schema = dict(version["schema"]["openAPIV3Schema"])
    props = dict(schema["properties"])
    props.pop("status", None)
    props["apiVersion"] = {**props["apiVersion"], "const": f"{crd['spec']['group']}/{version['name']}"}
    props["kind"] = {**props["kind"], "const": crd["spec"]["names"]["kind"]}
    schema["properties"] = props
    schema["required"] = sorted({"apiVersion", "kind", "metadata", *schema.get("required", [])})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": f"Derived by tests/schemas/crd_to_json_schema.py from {source}",
        **strict(schema),
    }


if __name__ == "__main__":
    crd_file, source = sys.argv[1], sys.argv[2]
    crd = yaml.safe_load(Path(crd_file).read_text(encoding="utf-8"))
    json.dump(derive(crd, source), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
