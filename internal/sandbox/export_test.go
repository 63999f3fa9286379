package sandbox

// The helpers the external tests (landlock_linux_test.go, which runs the
// test binary as the helper through sandbox/confine) share with these.
var (
	Tree          = tree
	WriteRepoTree = writeRepoTree
)
