//go:build race

package engine

// raceBuild: the race detector slows the search about tenfold.
const raceBuild = true
