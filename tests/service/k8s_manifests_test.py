#!/usr/bin/python3
"""deploy/k8s/ checked without a Kubernetes cluster (none is reachable here): every file parses
as YAML, the kustomization lists them all, every object has the apiVersion of its kind, the
selectors, service names, volumes, secret keys and named ports refer to what exists, every
softwire flag in a container's args is one `softwire help COMMAND` lists, the server waits for
as many nodes as the StatefulSet starts, and the nodes' devices file is a cluster spec softwire
compiles a job for. Skips (77) without python3-yaml.
Usage: k8s_manifests_test.py SOFTWIRE_BINARY REPOSITORY_ROOT
"""
import os
import re
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("SKIP: no python3-yaml (apt-get install python3-yaml)")
    sys.exit(77)

API_VERSIONS = {
    "Deployment": "apps/v1", "StatefulSet": "apps/v1", "Service": "v1", "ConfigMap": "v1",
    "PersistentVolumeClaim": "v1", "NetworkPolicy": "networking.k8s.io/v1",
}
# The secret made by hand (docs/CLUSTERS.md) and the keys it has.
SECRETS = {"softwire-tls": {"ca.pem", "server.pem", "server.key", "token"}}

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def main():
    softwire, root = sys.argv[1], sys.argv[2]
    folder = os.path.join(root, "deploy", "k8s")
    files = sorted(f for f in os.listdir(folder) if f.endswith(".yaml"))
    objects = []
    for name in files:
        with open(os.path.join(folder, name)) as f:
            try:
                docs = list(yaml.safe_load_all(f))
            except yaml.YAMLError as error:
                check(False, "%s does not parse: %s" % (name, error))
                continue
        for doc in docs:
            if doc is None:
                continue
            if check(isinstance(doc, dict), "%s: a document that is not a mapping" % name):
                objects.append((name, doc))

    kustomization = [d for n, d in objects if d.get("kind") == "Kustomization"]
    check(len(kustomization) == 1, "one kustomization.yaml")
    listed = set(kustomization[0].get("resources", [])) if kustomization else set()
    check(listed == set(files) - {"kustomization.yaml"},
          "the kustomization lists %s, the folder has %s" % (sorted(listed), files))

    by_kind = {}
    for name, doc in objects:
        kind = doc.get("kind")
        if kind == "Kustomization":
            continue
        check(kind in API_VERSIONS, "%s: unexpected kind %s" % (name, kind))
        check(doc.get("apiVersion") == API_VERSIONS.get(kind),
              "%s: %s has apiVersion %s" % (name, kind, doc.get("apiVersion")))
        meta = doc.get("metadata", {})
        check(re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", meta.get("name", "")) is not None,
              "%s: %s has no valid metadata.name" % (name, kind))
        by_kind.setdefault(kind, {})[meta.get("name")] = doc

    workloads = dict(by_kind.get("Deployment", {}))
    workloads.update(by_kind.get("StatefulSet", {}))
    pod_labels = {}
    for wname, w in workloads.items():
        spec = w["spec"]
        labels = spec["template"]["metadata"]["labels"]
        pod_labels[wname] = labels
        selector = spec["selector"]["matchLabels"]
        check(all(labels.get(k) == v for k, v in selector.items()),
              "%s: its selector %s does not match its pods' labels %s" % (wname, selector, labels))
        pod = spec["template"]["spec"]
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        for v in volumes.values():
            if "secret" in v:
                secret = v["secret"]["secretName"]
                check(secret in SECRETS, "%s: unknown secret %s" % (wname, secret))
                for item in v["secret"].get("items", []):
                    check(item["key"] in SECRETS.get(secret, set()),
                          "%s: secret %s has no key %s" % (wname, secret, item["key"]))
            if "configMap" in v:
                check(v["configMap"]["name"] in by_kind.get("ConfigMap", {}),
                      "%s: no ConfigMap %s" % (wname, v["configMap"]["name"]))
            if "persistentVolumeClaim" in v:
                check(v["persistentVolumeClaim"]["claimName"] in
                      by_kind.get("PersistentVolumeClaim", {}),
                      "%s: no claim %s" % (wname, v["persistentVolumeClaim"]["claimName"]))
        for c in pod["containers"]:
            for m in c.get("volumeMounts", []):
                check(m["name"] in volumes, "%s: mount of undeclared volume %s" % (wname, m["name"]))
            args = c.get("args", [])
            command = args[0] if args else ""
            check(command in ("serve", "node"), "%s: runs softwire %s" % (wname, command))
            help_text = subprocess.run([softwire, "help", command], stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True).stdout
            for arg in args[1:]:
                flag = arg.split("=", 1)[0]
                check(flag.startswith("--") and re.search(r"\s%s\b" % re.escape(flag), help_text),
                      "%s: softwire %s has no flag %s" % (wname, command, flag))
            env = {e["name"] for e in c.get("env", [])}
            for var in re.findall(r"\$\((\w+)\)", " ".join(args)):
                check(var in env, "%s: $(%s) is not in the container's env" % (wname, var))
            w.setdefault("_ports", set()).update(
                p.get("name") for p in c.get("ports", []) if p.get("name"))
            w.setdefault("_args", []).extend(args)

    services = by_kind.get("Service", {})
    for sname, s in services.items():
        selector = s["spec"].get("selector", {})
        matched = [w for w, labels in pod_labels.items()
                   if all(labels.get(k) == v for k, v in selector.items())]
        check(len(matched) == 1, "service %s selects %s" % (sname, matched))
        for port in s["spec"].get("ports", []):
            target = port.get("targetPort")
            if isinstance(target, str) and matched:
                check(target in workloads[matched[0]]["_ports"],
                      "service %s: no container port named %s" % (sname, target))
    for sname, st in by_kind.get("StatefulSet", {}).items():
        headless = services.get(st["spec"]["serviceName"])
        check(headless is not None and headless["spec"].get("clusterIP") == "None",
              "%s: serviceName %s is no headless service" % (sname, st["spec"]["serviceName"]))

    # The server waits for as many nodes as there are, and they join its service's port.
    server = by_kind.get("Deployment", {}).get("softwire-server")
    nodes = by_kind.get("StatefulSet", {}).get("softwire-node")
    if check(server is not None and nodes is not None, "a softwire-server and a softwire-node"):
        wanted = [a.split("=", 1)[1] for a in server["_args"] if a.startswith("--nodes=")]
        check(wanted == [str(nodes["spec"]["replicas"])],
              "serve --nodes %s but %s node replicas" % (wanted, nodes["spec"]["replicas"]))
        join = [a.split("=", 1)[1] for a in nodes["_args"] if a.startswith("--join=")]
        ports = {p["port"] for p in services["softwire-server"]["spec"]["ports"]}
        check(len(join) == 1 and join[0].split(":")[0] == "softwire-server" and
              int(join[0].split(":")[1]) in ports, "the nodes join %s" % join)

    for cname, cm in by_kind.get("ConfigMap", {}).items():
        for key, text in cm.get("data", {}).items():
            if not key.endswith(".pbtxt"):
                continue
            with tempfile.NamedTemporaryFile("w", suffix=".pbtxt") as spec:
                spec.write(text)
                spec.flush()
                done = subprocess.run(
                    [softwire, "compile", os.path.join(root, "bench", "training", "mlp.pbtxt"),
                     "--cluster", spec.name], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    text=True)
                check(done.returncode == 0, "configmap %s/%s is no cluster spec softwire takes: %s"
                      % (cname, key, done.stdout))

    for failure in failures:
        print("FAIL: " + failure)
    print("%d objects in %d files checked" % (len(objects), len(files)))
    if failures:
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
