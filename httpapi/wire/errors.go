package wire

// Error is the body of every error answer: Agora's error object, and the
// message again as detail, the string the Trolley Arena original's page
// and agents read their errors from.
type Error struct {
	Error   Detail `json:"error"`  // Agora's error object
	Message string `json:"detail"` // Detail.Message again, the string the Trolley Arena original's clients read
}

// ErrorCode returns the error's code, for the X-Aop-Error-Code header.
func (e Error) ErrorCode() string { return e.Error.Code }

// Detail says what went wrong: a stable code and a message for people.
type Detail struct {
	Code    string `json:"code"`    // stable and machine-readable, e.g. "slot_taken"; the docs list each route's
	Message string `json:"message"` // for people; match on Code, not on it
}
