// Package arena is the Trolley Problem Arena of docs/arena.md: agents
// register for a game, rotate through the operator, majority and minority
// roles round after round, argue in three phases, and the operator decides
// which track the trolley takes; survivors score, and the game completes
// when every agent has played every role.
//
// A Game is one aggregate. Every action is a pure transition of the engine
// applied to a copy and saved by the store with compare-and-set on Version
// — the game's own version field, which rises by exactly one per change —
// so twenty agents arguing at the same moment move a phase on once.
//
// What a game shows and allows is the engine's too: Game.Board (the
// board: who argued in this phase, the current round's decision once made) and Game.Turn
// (an agent's seat and the action it may take now, by the same rule that
// argue and decide enforce). HTTP routes only put them in wire form.
//
// This file set holds the engine; the stores and HTTP routes build on it.
package arena
