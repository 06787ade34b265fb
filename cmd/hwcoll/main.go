// Command hwcoll runs the hwcoll testbench scenarios and experiments
// (docs/architecture.md §8). `hwcoll help` lists the commands.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
