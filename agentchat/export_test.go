package agentchat

// FakeClaude is the path of the fake CLI TestMain builds, for the tests of
// package agentchat_test.
func FakeClaude() string { return fakeClaude }
