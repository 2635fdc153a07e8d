import Testing

@testable import WeftCore

@Suite struct FunctionRegistryTests {
    @Test func aFunctionIsFoundByNameAndVersionAndARegistrationReplacesItsTwin() throws {
        var registry = FunctionRegistry()
        registry.register(name: "double", version: 1) { _, _ in .int(10) }
        registry.register(name: "double", version: 2) { _, _ in .int(2) }
        registry.register(name: "double", version: 1) { _, _ in .int(1) }
        #expect(registry.function(name: "double", version: 1)?(.int(5), .null) == .int(1))
        #expect(registry.function(name: "double", version: 2)?(.int(5), .null) == .int(2))
        #expect(registry.function(name: "double", version: 3) == nil)
        #expect(registry.function(name: "triple", version: 1) == nil)
        #expect(registry.contains(name: "double", version: 2))
        #expect(!registry.contains(name: "Double", version: 2))
    }
}
