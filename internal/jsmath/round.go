// Package jsmath holds the number rules of JavaScript that the originals'
// servers apply to what agents send, so that Agora rounds as they do.
package jsmath

import "math"

// Round is JavaScript's Math.round: x to the nearest integer, halves up
// (-2.5 is -2, 2.5 is 3, and 0.49999999999999994 is 0, where
// math.Floor(x+0.5) says 1). NaN and infinities are returned as they are.
func Round(x float64) float64 {
	r := math.Floor(x)
	if x-r >= 0.5 {
		r++
	}
	return r
}
