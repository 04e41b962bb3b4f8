package wire

// Error is the body of every error answer: Agora's error object, and the
// message again as detail, the string the Trolley Arena original's page
// and agents read their errors from.
type Error struct {
	Error   Detail `json:"error"`
	Message string `json:"detail"`
}

// Detail says what went wrong: a stable code and a message for people.
type Detail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
