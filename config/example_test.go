package config_test

import (
	"fmt"

	"github.com/hwcoll/hwcoll/config"
)

func ExampleParse() {
	c, err := config.Parse([]byte("network:\n  ports: 32\nlink: {gbps: 2.5}\n"))
	if err != nil {
		panic(err)
	}
	t := c.Timing()
	fmt.Println(c.Network.Ports, c.Network.Inputs, t.LinkBytesNum, t.LinkBytesDen, t.PacketCycles)

	_, err = config.Parse([]byte("network:\n  topolgy: torus\n"))
	fmt.Println(err)
	_, err = config.Parse([]byte("network: {ports: 1}"))
	fmt.Println(err)
	// Output:
	// 32 32 5 4 205
	// network.topolgy: unknown key (did you mean network.topology?); allowed keys in network: topology, ports, inputs, organization, xp_buffer_packets, credit_mode, fanout_splitting, iterations, combine_units, nodes, dims, vls, vl_policy, tree_builder, min_kind, irregular_file, switches, degree
	// network.ports: 1 is out of range; allowed 2..256
}

func ExampleConfig_Set() {
	c := config.Default()
	for _, s := range []string{"network.topology=torus", "network.dims=64x32x32", "traffic.load=0.3"} {
		if err := c.Set(s); err != nil {
			panic(err)
		}
	}
	fmt.Println(c.Network.Dims, c.Traffic.Load, c.Validate())
	fmt.Println(c.Set("link.gbps=abc"))
	// Output:
	// [64 32 32] 0.3 <nil>
	// link.gbps: "abc" is not a number
}

func ExampleConfig_Timing() {
	t := config.Default().Timing()
	fmt.Println(t.PeriodPS, t.LinkBytesNum, t.LinkBytesDen, t.PacketCycles, t.LinkDelayCycles, t.SwitchDelayCycles, t.SendOverheadCycles)
	// Output: 4000 5 1 52 5 23 325
}

func ExampleKeys() {
	for _, k := range config.Keys()[3:6] {
		fmt.Printf("%s = %s (%s)\n", k.Key, k.Default, k.Allowed)
	}
	// Output:
	// network.topology = switch (switch | fattree | torus | mesh | ibmesh | bgltree | min | irregular)
	// network.ports = 8 (2..256)
	// network.inputs = 8 (1..network.ports)
}
