package claudecli

// FakeClaude is the path of the fake CLI TestMain builds, for the tests of
// package claudecli_test.
func FakeClaude() string { return fakeClaude }
