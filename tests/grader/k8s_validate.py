#!/usr/bin/python3
"""Checks Kubernetes manifests offline against Kubernetes' own object models.

The models are those of Debian's python3-kubernetes (generated from the
Kubernetes API's OpenAPI definitions): every field of every object must be
one the model declares, with the model's type, and every field the model
requires must be there. A few rules that the API server enforces and the
models do not (a Job's restart policy, an Indexed Job's completions, names as
DNS labels, mounts of declared volumes, quantities) are checked as well.

  k8s_validate.py MANIFEST...      exit 0: all valid; 1: the errors, a line
                                   each, "file: path: what"; 77: no models
  k8s_validate.py --pod INDEX MANIFEST [CLAIM=DIR...] [IMAGE_PATH=DIR...]
                                   each container of pod INDEX of the Job as
                                   the kubelet starts it, one JSON object per
                                   line: argv (after $(VAR) expansion), env,
                                   working dir; a volume's mount path is
                                   mapped to the DIR given for its claim, and
                                   a path in the image to the DIR given for it
"""
import json
import re
import sys

try:
    import yaml
    import kubernetes
    from kubernetes import client
except ImportError as e:  # the test reports skipped, never passed
    print(f"skipped: Debian's python3-kubernetes is not installed ({e})")
    sys.exit(77)

PRIMITIVES = {"str": str, "int": int, "bool": bool, "float": (int, float)}
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
QUANTITY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")


def model_class(api_version, kind):
    version = api_version.split("/")[-1]
    return getattr(client, version[0].upper() + version[1:] + kind, None)


def required_fields(cls):
    """The fields whose setters refuse None: the model's required ones."""
    probe = cls.__new__(cls)
    probe.local_vars_configuration = client.Configuration()
    required = []
    for attr in cls.openapi_types:
        try:
            setattr(probe, attr, None)
        except ValueError:
            required.append(cls.attribute_map[attr])
    return required


class Checker:
    def __init__(self, where):
        self.where = where
        self.errors = []

    def error(self, path, what):
        self.errors.append(f"{self.where}: {path or '(top)'}: {what}")

    def value(self, v, type_name, path):
        if type_name.startswith("list["):
            if not isinstance(v, list):
                return self.error(path, f"expected a list ({type_name}), got {type(v).__name__}")
            for i, item in enumerate(v):
                self.value(item, type_name[5:-1], f"{path}[{i}]")
        elif type_name.startswith("dict("):
            inner = type_name[5:-1].split(", ", 1)[1]
            if not isinstance(v, dict):
                return self.error(path, f"expected a map ({type_name}), got {type(v).__name__}")
            for k, item in v.items():
                self.value(item, inner, f"{path}.{k}")
        elif type_name in PRIMITIVES:
            ok = isinstance(v, PRIMITIVES[type_name]) and not (type_name != "bool" and isinstance(v, bool))
            if not ok:
                self.error(path, f"expected {type_name}, got {type(v).__name__} {v!r}")
        elif type_name == "object":
            pass  # int-or-string and free-form fields: the server's business
        else:
            cls = getattr(client, type_name, None)
            if cls is None:
                return self.error(path, f"the models have no type {type_name}")
            self.model(v, cls, path)

    def model(self, v, cls, path):
        if not isinstance(v, dict):
            return self.error(path, f"expected an object ({cls.__name__}), got {type(v).__name__}")
        by_json = {j: a for a, j in cls.attribute_map.items()}
        for key, item in v.items():
            if key not in by_json:
                self.error(f"{path}.{key}".lstrip("."), f"{cls.__name__} has no field '{key}' "
                           f"(Kubernetes models {kubernetes.__version__})")
                continue
            self.value(item, cls.openapi_types[by_json[key]], f"{path}.{key}".lstrip("."))
        for key in required_fields(cls):
            if key not in v:
                self.error(path, f"{cls.__name__} requires '{key}'")

    def server_rules(self, doc):
        """What the API server refuses and the models let through."""
        name = doc.get("metadata", {}).get("name", "")
        if not DNS_LABEL.match(str(name)):
            self.error("metadata.name", f"'{name}' is not a DNS label")
        spec = doc.get("spec") or {}
        pod = (spec.get("template") or {}).get("spec") or {}
        if doc.get("kind") == "Job":
            if pod.get("restartPolicy") not in ("Never", "OnFailure"):
                self.error("spec.template.spec.restartPolicy", "a Job's pods must restart Never or OnFailure")
            if spec.get("completionMode") == "Indexed" and not spec.get("completions"):
                self.error("spec.completions", "an Indexed Job needs completions")
        volumes = {v.get("name") for v in pod.get("volumes") or []}
        for i, c in enumerate(pod.get("containers") or []):
            at = f"spec.template.spec.containers[{i}]"
            if not DNS_LABEL.match(str(c.get("name", ""))):
                self.error(f"{at}.name", f"'{c.get('name')}' is not a DNS label")
            for j, m in enumerate(c.get("volumeMounts") or []):
                if m.get("name") not in volumes:
                    self.error(f"{at}.volumeMounts[{j}].name", f"no volume '{m.get('name')}' in the pod")
            for kind, amounts in ((c.get("resources") or {}).items()):
                for resource, amount in (amounts or {}).items():
                    if not QUANTITY.match(str(amount)):
                        self.error(f"{at}.resources.{kind}.{resource}", f"'{amount}' is not a quantity")


def check_file(path):
    with open(path, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    checker = Checker(path)
    if not docs:
        checker.error("", "no object in the file")
    for doc in docs:
        if not isinstance(doc, dict) or "apiVersion" not in doc or "kind" not in doc:
            checker.error("", "an object needs apiVersion and kind")
            continue
        cls = model_class(doc["apiVersion"], doc["kind"])
        if cls is None:
            checker.error("", f"the models have no {doc['apiVersion']} {doc['kind']}")
            continue
        before = len(checker.errors)
        checker.model(doc, cls, "")
        if len(checker.errors) == before:  # its shape is known to be the model's
            checker.server_rules(doc)
    return checker.errors


def expand(text, env):
    """The kubelet's $(VAR) expansion: a defined VAR is replaced, $$ is one $,
    anything else (an undefined name, $((...)), an unclosed $( ) stays."""
    out, i = [], 0
    while i < len(text):
        if text.startswith("$$", i):
            out.append("$")
            i += 2
        elif text.startswith("$(", i) and text.find(")", i) != -1:
            end = text.find(")", i)
            name = text[i + 2:end]
            out.append(env[name] if name in env else text[i:end + 1])
            i = end + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def pod_of(path, index, places):
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    spec = doc["spec"]
    pod = spec["template"]["spec"]
    claims = {v["name"]: v.get("persistentVolumeClaim", {}).get("claimName") for v in pod.get("volumes") or []}
    for c in pod["containers"]:
        env = {"JOB_COMPLETION_INDEX": str(index)} if spec.get("completionMode") == "Indexed" else {}
        for e in c.get("env") or []:
            env[e["name"]] = expand(e.get("value", ""), env)
        argv = [expand(a, env) for a in (c.get("command") or []) + (c.get("args") or [])]
        # Longest paths first, so that /a/b is mapped before /a.
        mapping = dict(places)
        for m in c.get("volumeMounts") or []:
            claim = claims.get(m["name"])
            if claim not in places:
                raise SystemExit(f"{path}: no folder given for claim {claim!r} (mounted at {m['mountPath']})")
            mapping[m["mountPath"]] = places[claim]
        # One pass over the text: a host path put in for one mount must not be
        # mapped again by another (a checkout at /tmp/a/b/gradlab holds
        # /gradlab, the app's own mount).
        pattern = re.compile("|".join(re.escape(m) for m in sorted(mapping, key=len, reverse=True)))
        def mapped(text):
            return pattern.sub(lambda found: mapping[found.group(0)], text) if mapping else text
        print(json.dumps({"argv": [mapped(a) for a in argv], "env": env,
                          "cwd": mapped(c.get("workingDir", "/"))}))


def main(paths):
    if paths[:1] == ["--pod"]:
        pod_of(paths[2], int(paths[1]), dict(p.split("=", 1) for p in paths[3:]))
        return 0
    errors = [e for p in paths for e in check_file(p)]
    for e in errors:
        print(e)
    if not errors:
        print(f"valid against Kubernetes models {kubernetes.__version__}: {' '.join(paths)}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
