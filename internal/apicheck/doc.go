// Package apicheck holds a test of the module's public surface: no
// exported name of a public package may mention a type of an internal
// package, which code outside the module cannot name. It has no code of
// its own.
package apicheck
