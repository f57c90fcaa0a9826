// Package deploy holds usid's Kubernetes manifests (kustomize: base/ and
// overlays/dev, overlays/production, overlays/monitoring) and the Prometheus
// adapter rule the autoscaler needs. It has no Go code of its own: its tests
// render every overlay with `kubectl kustomize`, decode every object strictly
// into its Kubernetes API type, check the invariants that tie the manifests
// to usid (probe paths and ports, grace period against the longest search,
// resources against the engine configuration, non-root, the autoscaler's
// metric) against a running usid, and check that the Dockerfile agrees with
// the configuration usid ships. See README.md beside this file.
package deploy
