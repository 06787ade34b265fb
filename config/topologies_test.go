package config

// The networks this package's tests name: the registry (package experiment)
// is not linked here, so they stand in for it.
func init() {
	TopologyNames = func() []string {
		return []string{"switch", "fattree", "torus", "mesh", "ibmesh", "bgltree", "min", "irregular"}
	}
}
