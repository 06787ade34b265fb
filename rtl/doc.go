// Package rtl is the clocked-simulation kernel every hwcoll block is built on.
//
// Semantics (docs/architecture.md §3):
//   - One clock per Sim. Each cycle has two phases: eval, in which every awake
//     component reads register outputs (Q) and input ports and writes next
//     values (D), then commit, in which dirty registers take their D.
//   - Outputs between components are registered (Moore): a value driven in
//     cycle t is seen by the consumer in cycle t+1. Evaluation order therefore
//     cannot change a result, and eval may run on several goroutines.
//   - Delay lines (Line) carry a stream of values with latency L as a ring of
//     timed entries, so a link costs O(1) per value, not L registers.
//   - Activity: a component sleeps when it says so (Sleep, SleepUntil), having
//     seen the next state it set, and is woken by a change on one of its
//     inputs, an arrival on one of its lines, or its timer. When every
//     component sleeps the clock jumps to the next timer (time skipping).
//     Results and traces are identical with skipping on or off, and with
//     activity off (every component evaluated every cycle), which is how the
//     sleep claims of a component are tested.
//   - Randomness: every module draws from its own stream derived from the
//     master seed and its hierarchical path.
//
// Declared fields: a component's ports, registers, probes, line and call
// ends, arrays and sub-blocks held by value are fields of its struct, each
// declared by its constructor with Init; so are those of plain structs,
// Go arrays and slices among its fields (not what pointers, maps or
// interfaces reach). Build refuses a field never Init'ed (it would fail at
// its first use, or be missing from every trace), naming the component's
// path, the line that declared the component, the field and its type. A
// field some configurations leave unused on purpose (the link ends a
// router's node port does without, a register of one switch organization)
// is tagged `rtl:"optional"`.
//
// Speed (docs/performance.md): timers live in a calendar of the next 1024 cycles
// (a heap beyond), one per partition; a delay line whose two ends share a partition takes a
// value at the send instead of at the commit (it cannot be seen before
// now+latency anyway), and may take one settled early for a later cycle
// (LineOut.Schedule); components that must share state (a switch's ports)
// are kept in one partition (Module.Together) and wake each other with
// Module.WakeAt; registers and lines keep what the hot path needs (owner,
// traced flag, the line itself) inline rather than behind the signal
// record. A parallel Sim whose partitions exchange values only by lines of
// 2 cycles or more (Sim.Lookahead) pays one barrier a cycle, not two: a
// value for another partition waits in the sender's slot until the
// receiving partition puts it on the line at the start of the next cycle
// (in a cycle run serially it goes onto the line at once, as within a
// partition). A split Sim whose cycles stay serial for a while (the load
// rule's or the meter's way) folds: partition 0 schedules every
// component, a cycle costs what one partition's does, and the Sim unfolds
// when a cycle would go parallel (fold.go). SetMeasured runs cycles in parallel only
// while timed to be faster, and does not try them while other processes
// hold the cores.
package rtl
