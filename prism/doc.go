// Package prism holds the Prism deliberation protocol of docs/prism.md as
// data: a Protocol is a list of layers, each with its work roles, its
// consensus slots, its confidence threshold, the shape its structured
// output must have and the effect it has when it passes. PrismV1 is the
// default protocol; AOP's others are built in beside it (PrismV1Solo,
// MetaV1, whose layer 0 routes a claim to the protocol its classifiers
// vote, and LensV1, whose summary records no verdict); hosts may define
// their own with the same types.
//
// This package also holds the pure rules a pipeline applies when a layer
// closes: validating structured output against a layer's shape, normalising
// domain slugs, and the majority votes and averages of a layer's
// submissions. The pipeline engine and its stores build on them.
package prism
