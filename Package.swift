// swift-tools-version: 6.1
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

// Test code is compiled unoptimised even in `make test`'s release build: the code under test stays
// optimised, and optimising some 27,000 lines of tests (Swift Testing's expanded macros above all) cost
// more build time than it saved in the run (Docs/BENCHMARKS.md, "Test build").
let testSettings: [SwiftSetting] = strict + [.unsafeFlags(["-Onone"], .when(configuration: .release))]

let package = Package(
    name: "Weft",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Weft", targets: ["Weft"]),
        .library(name: "WeftCore", targets: ["WeftCore"]),
        .library(name: "WeftSimulation", targets: ["WeftSimulation"]),
        .executable(name: "weft", targets: ["weft"]),
        .executable(name: "weft-sim", targets: ["weft-sim"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibUV",
            path: "Sources/CLibUV",
            pkgConfig: "libuv",
            providers: [.apt(["libuv1-dev"])]
        ),
        .systemLibrary(name: "CSQLiteTuning", path: "Sources/CSQLiteTuning", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CPrefetch", path: "Sources/CPrefetch"),
        .target(name: "CStopSignals", path: "Sources/CStopSignals"),
        // WEFT_DIE_WITH_PARENT, the testing aid both executables honour (prctl(2) is variadic in C).
        .target(name: "CParentDeath", path: "Sources/CParentDeath"),
        .target(name: "WeftCore", dependencies: ["CPrefetch"], swiftSettings: strict),
        .target(
            name: "WeftStore",
            dependencies: [
                "WeftCore", "CSQLiteTuning", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "WeftSync",
            dependencies: ["WeftCore", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        .target(
            name: "WeftNet",
            dependencies: ["CLibUV", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .target(
            name: "Weft",
            dependencies: [
                "WeftCore", "WeftStore", "WeftSync", "WeftNet",
                .product(name: "Logging", package: "swift-log"),
                .product(
                    name: "OpenCombine", package: "OpenCombine",
                    condition: .when(platforms: [.linux, .windows, .android])),
                .product(
                    name: "OpenCombineDispatch", package: "OpenCombine",
                    condition: .when(platforms: [.linux, .windows, .android])),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "WeftHTTP",
            dependencies: [
                "Weft", "WeftCore", "WeftSync",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "weft",
            dependencies: [
                "Weft", "WeftCore", "WeftStore", "WeftSync", "WeftNet", "WeftHTTP", "CStopSignals",
                "CParentDeath",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "SharedCounter", dependencies: ["Weft", "WeftCore"], path: "Examples/SharedCounter",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "ChatLog", dependencies: ["Weft"], path: "Examples/ChatLog", swiftSettings: strict
        ),
        .executableTarget(
            name: "Inventory", dependencies: ["Weft"], path: "Examples/Inventory", swiftSettings: strict
        ),
        .executableTarget(
            name: "TaskBoard", dependencies: ["Weft", "WeftCore"], path: "Examples/TaskBoard", swiftSettings: strict
        ),
        .target(
            name: "WeftSimulation",
            dependencies: ["WeftCore", "WeftStore", "WeftSync"],
            path: "Simulations/WeftSimulation",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "weft-sim",
            dependencies: [
                "WeftSimulation", "CParentDeath",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Simulations/weft-sim",
            swiftSettings: strict
        ),
        // Test helpers shared by the test targets (the one op builder, child processes that die with the test).
        .target(
            name: "WeftTestSupport", dependencies: ["WeftCore", "CParentDeath"], path: "Tests/WeftTestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "WeftCoreTests",
            dependencies: [
                "WeftCore", "WeftTestSupport", .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "WeftStoreTests",
            dependencies: [
                "WeftStore", "WeftCore", "WeftTestSupport", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "WeftSyncTests",
            dependencies: ["WeftSync", "WeftCore"],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "WeftNetTests",
            dependencies: ["WeftNet", "WeftCore"],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "WeftTests",
            dependencies: [
                "Weft", "WeftCore", "WeftStore", "WeftSync", "WeftNet", "WeftTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(
                    name: "OpenCombine", package: "OpenCombine",
                    condition: .when(platforms: [.linux, .windows, .android])),
            ],
            swiftSettings: testSettings
        ),
        // Test helpers of the HTTP face: a webhook receiver on a real socket.
        .target(
            name: "WeftHTTPTestSupport",
            dependencies: [
                "WeftHTTP",
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/WeftHTTPTestSupport", swiftSettings: strict
        ),
        .testTarget(
            name: "WeftHTTPTests",
            dependencies: [
                "WeftHTTP", "Weft", "WeftCore", "WeftSync", "WeftHTTPTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "WeftCore", "Weft", "weft", "WeftHTTPTestSupport", "WeftTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "WeftSimulationTests",
            dependencies: ["WeftSimulation", "WeftCore", "WeftTestSupport", "weft-sim"],
            swiftSettings: testSettings
        ),
    ]
)
