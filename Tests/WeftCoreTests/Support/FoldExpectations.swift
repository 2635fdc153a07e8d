import Testing

@testable import WeftCore

/// Applies `ops` in order, each its own batch, and checks state and outcomes against the reference fold
/// with the engine's registry.
func expectFoldOneByOne(_ ops: [Op], engine: MergeEngine) {
    for op in ops {
        engine.apply([op])
        expectInvariants(engine)
    }
    let expected = ReferenceFold.fold(ops, registry: engine.registry)
    #expect(engine.state == expected.state)
    for op in ops { #expect(engine.outcome(of: op.stamp) == expected.outcomes[op.stamp], "\(op.stamp)") }
}

/// Delivers `ops` to `engines` fresh engines, each in a random order, random batches and random
/// duplicates drawn from `rng`, and checks each engine's state and outcomes against the reference fold.
func expectFoldInRandomDeliveries(
    _ ops: [Op], registry: FunctionRegistry, engines: Int, rng: inout SeededGenerator, label: String
) {
    let expected = ReferenceFold.fold(ops, registry: registry)
    for _ in 0..<engines {
        let engine = MergeEngine(registry: registry)
        MergeEnginePropertyTests.deliver(ops, rng: &rng, engine: engine)
        #expect(engine.state == expected.state, "\(label)")
        for op in ops { #expect(engine.outcome(of: op.stamp) == expected.outcomes[op.stamp], "\(label)") }
    }
}

/// Records an issue when a summary the engine keeps differs from its recomputation from the log.
func expectInvariants(_ engine: MergeEngine, sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        try engine.checkInvariants()
    } catch {
        Issue.record("merge invariant broken: \(error)", sourceLocation: sourceLocation)
    }
}
