// Package dsmprog holds execution-driven shared-memory programs for the
// DSM machine (seed 001 §5-7): the two SPLASH-2 applications the paper
// runs, small kernels that each exercise one sharing pattern, and the
// ANL-macro synchronisation library they are written with.
//
// A program is ordinary Go that reads and writes the shared space only
// through a dsm.Proc and computes on, and branches on, the values it
// loads. Every datum another processor reads lives in the dsm.Space; a
// processor keeps only a few private locals (its registers and a small
// private memory: a digit histogram, a walk stack). Before each reference
// a program spends p.Compute(n) for the instructions between that
// reference and the one before, estimated as the paper's DLXcc -O2
// instrumentation would count them (seed 001 §6); the estimates are
// written next to each call.
//
// Programs (New(name, size, seed); size 0 is the default):
//
//	radix              SPLASH-2 integer radix sort; size = keys (default 1M, 2^20),
//	                   SPLASH-2's radix 1024 and keys below 2^19: 2 passes
//	barnes             SPLASH-2 Barnes–Hut; size = bodies (default 8K), Plummer
//	                   model, 2 time steps, theta 1.0
//	false-sharing      size = increments per processor (default 64)
//	producer-consumer  size = records handed down the chain (default 16)
//	lock-contention    size = locked increments per processor (default 16)
//	migratory          size = rounds of the record through every processor (default 8)
//	random             size = references per processor (default 200)
//
// Every program runs on any number of processors, including counts that
// are not powers of two and more processors than work.
//
// Synchronisation (sync.go): Lock (test-and-test-and-set with bounded
// exponential backoff; acquire and release fences), LockArray (locks a
// line apart), Barrier (sense-reversing, centralised). Spin loops pause
// with bounded exponential backoff (p.Compute), which also bounds the
// references a waiting processor makes on the timed machine.
package dsmprog
