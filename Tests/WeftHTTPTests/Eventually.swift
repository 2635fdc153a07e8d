import Foundation

/// Polls `condition` every 10 ms until it holds, at most `seconds`.
func eventually(_ what: String, seconds: Double = 10, _ condition: () throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    if try condition() { return }
    struct Timeout: Error, CustomStringConvertible { let description: String }
    throw Timeout(description: "timed out after \(seconds) s waiting for \(what)")
}
