package experiment

// SourceQueue is sourceQueue, for the external tests.
var SourceQueue = sourceQueue
