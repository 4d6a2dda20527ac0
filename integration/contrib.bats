#!/usr/bin/env bats
# integration/contrib.bats - the contrib/ snippets that no daemon suite loads.
#
# docker/daemon.json, podman/containers.conf and containerd/config.toml are
# loaded by docker.bats, podman.bats and containerd.bats.  Here: the
# Kubernetes RuntimeClass through `kubectl apply --dry-run=client` (against a
# tiny local discovery stub, since client-side dry run still maps the kind
# through the API server), the CRI-O drop-in as TOML (CRI-O is not in
# Debian 12), the agent-sandbox SandboxTemplate as YAML (its CRDs need a
# cluster) and the SystemdCgroup containerd fragment as TOML.

load lib

setup_file() {
	it_tmp contrib
}

teardown() {
	[ -z "${KAPI_PID:-}" ] || it_stop_pid "$KAPI_PID" 5
}

teardown_file() {
	[ -n "${IT_TMP:-}" ] || return 0
	local rc=0
	it_kill_under "$IT_TMP" || rc=1
	it_cleanup_tmp || rc=1
	return $rc
}

# kapi_start: the discovery stub on a free local port; exports KAPI.
kapi_start() {
	python3 "$IT_SRC/integration/helpers/fake-apiserver.py" "$IT_TMP/kport" 3>&- &
	KAPI_PID=$!
	export KAPI_PID
	it_wait 10 test -s "$IT_TMP/kport" || it_die "fake API server did not start"
	KAPI=http://127.0.0.1:$(cat "$IT_TMP/kport")
}

kc() {
	KUBECONFIG=$IT_TMP/kubeconfig timeout 30 kubectl --server "$KAPI" --cache-dir "$IT_TMP/kcache" "$@"
}

@test "contrib/kubernetes/runtimeclass.yaml: kubectl apply --dry-run=client" {
	it_need_bin kubectl python3
	kapi_start
	run kc apply --dry-run=client --validate=false -f "$IT_SRC/contrib/kubernetes/runtimeclass.yaml"
	[ "$status" -eq 0 ]
	[ "$output" = "runtimeclass.node.k8s.io/agentrt created (dry run)" ]
	run kc label --local -o json -f "$IT_SRC/contrib/kubernetes/runtimeclass.yaml" x=y
	[ "$(echo "$output" | jq -r '.apiVersion + " " + .kind + " " + .metadata.name + " " + .handler')" = \
		"node.k8s.io/v1 RuntimeClass agentrt agentrt" ]
	# the check has teeth: a misspelt kind is refused
	sed 's/kind: RuntimeClass/kind: RuntimeClas/' "$IT_SRC/contrib/kubernetes/runtimeclass.yaml" >"$IT_TMP/bad.yaml"
	run kc apply --dry-run=client --validate=false -f "$IT_TMP/bad.yaml"
	[ "$status" -ne 0 ]
}

@test "contrib/crio/10-agentrt.conf: TOML with the agentrt handler (crio not in Debian 12)" {
	python3 -c 'import tomllib' 2>/dev/null || skip "python3 tomllib missing"
	run python3 -c '
import sys, tomllib
h = tomllib.load(open(sys.argv[1], "rb"))["crio"]["runtime"]["runtimes"]["agentrt"]
assert h["runtime_type"] == "oci", h
assert h["runtime_path"].endswith("/agentrt"), h
assert h["runtime_root"] == "/run/agentrt", h
print("ok")' "$IT_SRC/contrib/crio/10-agentrt.conf"
	[ "$status" -eq 0 ]
	if command -v crio >/dev/null; then
		skip "crio present: TODO run it"
	fi
}

@test "agentrt --version has the lines docker info parses" {
	[ -x "$AGENTRT" ] || skip "agentrt not built"
	run "$AGENTRT" --version
	[[ "${lines[0]}" =~ ^agentrt\ version\ [0-9] ]]
	[[ "${lines[1]}" =~ ^commit:\  ]]
	[[ "${lines[2]}" =~ ^spec:\ 1\. ]]
}

@test "contrib/kubernetes/sandboxtemplate.yaml: an agent-sandbox SandboxTemplate with runtimeClassName agentrt" {
	python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml missing"
	run python3 -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert d["apiVersion"] == "extensions.agents.x-k8s.io/v1alpha1", d["apiVersion"]
assert d["kind"] == "SandboxTemplate", d["kind"]
pod = d["spec"]["podTemplate"]
assert pod["spec"]["runtimeClassName"] == "agentrt", pod["spec"]
for k in pod["metadata"].get("annotations", {}):
    assert k.startswith("run.agentrt."), k
print("ok")' "$IT_SRC/contrib/kubernetes/sandboxtemplate.yaml"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
}

@test "contrib/containerd/config-systemd.toml: the agentrt handler with SystemdCgroup = true" {
	python3 -c 'import tomllib' 2>/dev/null || skip "python3 tomllib missing"
	run python3 -c '
import sys, tomllib
r = tomllib.load(open(sys.argv[1], "rb"))["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["agentrt"]
assert r["runtime_type"] == "io.containerd.runc.v2", r
assert r["options"]["SystemdCgroup"] is True, r
assert r["options"]["BinaryName"].endswith("/agentrt"), r
assert "run.agentrt.*" in r["pod_annotations"], r
print("ok")' "$IT_SRC/contrib/containerd/config-systemd.toml"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
}
