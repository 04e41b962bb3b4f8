package wire

// StoreHealth answers GET /healthz: whether the server's store answers.
type StoreHealth struct {
	// Status is "ok" when the store answered, else "unavailable".
	Status string `json:"status"`
	// Store names the backend: "memory", "postgres", "redis", or what the
	// host called it.
	Store string `json:"store"`
	// Message says, on a 503, what did not answer; the driver's own words
	// (hosts, ports) are logged, never answered.
	Message string `json:"message,omitempty"`
}
