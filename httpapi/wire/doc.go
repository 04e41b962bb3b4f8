// Package wire holds the JSON shapes of Agora's HTTP routes as typed
// structs: the request bodies the handlers of httpapi read and the answers
// they write, one file per route family. The handlers and the typed client
// (httpapi/client) both use these types, so a shape is declared once and an
// agent's binary needs no server code: wire imports nothing of Agora's.
//
// Where a seed is silent, a shape follows the original project's wire
// contract so that its clients work unchanged; Agora's additions are extra
// fields beside the original's.
package wire
