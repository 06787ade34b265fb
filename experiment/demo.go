package experiment

// Demo is a network's section of the tour hwcoll demo (make run) gives: a
// few small runs of what its paper is about, shown as a short table and
// the files to open. The command runs the sections in Order.
type Demo struct {
	Title string // e.g. "The BlueGene/L collective tree (the BG/L MPI paper §3)"
	Order int
}
