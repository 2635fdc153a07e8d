import Foundation
import WeftSync

/// The daemon's token file: one `NAME SECRET` per line, `#` starts a comment, blank lines are skipped.
///
/// ```
/// # peers: the same secret on both sides of each pair, filed under the other's name
/// berlin   a long secret shared by paris and berlin
/// # clients: the name they pass with --name
/// client   the command line's secret
/// ```
///
/// The secret is the rest of the line after the name and spaces (16 to 1024 bytes); every entry gets full
/// read and write permissions and may open either kind of session, unless a rules file (``RulesFile``)
/// says otherwise.
enum TokenFile {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Most entries one file may hold.
    static let entriesMax = 10_000
    /// Most bytes one file may hold: room for ``entriesMax`` entries of the longest name and secret, and
    /// their comments; a larger one (`/dev/zero`) is no token file.
    static let bytesMax = 16 * 1024 * 1024

    static func load(path: String) throws -> TokenBook {
        try parse(try readText(path: path, what: "token file"), source: path)
    }

    /// The UTF-8 text of a configuration file (`what` names it in errors), at most ``bytesMax``.
    static func readText(path: String, what: String) throws -> String {
        let unreadable = { (reason: String) in Failure(description: "cannot read the \(what) \(path): \(reason)") }
        // Read with the system's calls: Foundation's errors describe a directory as "(NSCocoaErrorDomain
        // error 256.)", and the system's reason is what tells the operator what to fix.
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw unreadable(String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw unreadable(String(cString: strerror(errno))) }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
            guard bytes.count <= bytesMax else { throw unreadable("it holds more than \(bytesMax >> 20) MiB") }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw unreadable("it is not UTF-8 text") }
        return text
    }

    static func parse(_ text: String, source: String) throws -> TokenBook {
        var book = TokenBook()
        var names = Set<String>()
        // A byte order mark (Windows editors write one) is no part of the first entry's name.
        let text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        // On newlines of every kind: "\r\n" is one Character, which a split on "\n" never meets.
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        for (index, rawLine) in lines.enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let place = "\(source):\(index + 1)"
            guard let space = line.firstIndex(where: { $0 == " " || $0 == "\t" }) else {
                throw Failure(description: "\(place): expected NAME SECRET")
            }
            let name = String(line[..<space])
            // A hello carries at most that many bytes of name: a longer entry could never be used.
            guard name.utf8.count <= SyncLimits.nameBytesMax else {
                throw Failure(description: "\(place): the name is longer than \(SyncLimits.nameBytesMax) bytes")
            }
            let secret = line[space...].trimmingCharacters(in: .whitespaces)
            guard names.insert(name).inserted else { throw Failure(description: "\(place): \(name) appears twice") }
            guard names.count <= entriesMax else {
                throw Failure(description: "\(source): more than \(entriesMax) entries")
            }
            do {
                book.set(try AuthToken(string: secret), for: name)
            } catch {
                throw Failure(description: "\(place): invalid secret for \(name): \(error)")
            }
        }
        return book
    }
}
