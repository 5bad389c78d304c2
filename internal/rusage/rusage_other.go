//go:build !unix

package replay

// getUsage is not implemented on this system: -U reports zeros.
func getUsage() resources { return resources{} }
