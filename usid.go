// Package usid holds the files that the usid binary embeds from the top of
// the repository: the default configuration and the OpenAPI spec. The
// byte slices are shared: read them, never modify them.
package usid

import _ "embed"

// DefaultConfig is usid.yaml: the engines Debian packages, as installed.
//
//go:embed usid.yaml
var DefaultConfig []byte

// OpenAPI is openapi.yaml, served at /openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
