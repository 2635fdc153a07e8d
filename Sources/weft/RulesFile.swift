import WeftSync

/// The daemon's rules file (`weft serve --rules`): the kind of each token entry and the paths it may read
/// and write. One rule per line, `#` starts a comment, blank lines are skipped:
///
/// ```
/// # KIND   NAME    [ACCESS     PATTERN]
/// client   alice   write      /users/$name/**
/// client   alice   read       /public/**
/// client   ops                                  # a client, the whole tree
/// peer     paris                                # a replica, the whole tree
/// peer     leaf1   readwrite  /stores/leaf1/**  # a replica limited to its subtree
/// ```
///
/// KIND is `peer` (may open replicating sessions, as peer or hub) or `client` (may open client sessions);
/// ACCESS is `read`, `write` or `readwrite`; PATTERN starts with `/` (see `PathPattern`). Every NAME must be
/// an entry of the token file: a rule for a misspelt name would leave the real one unrestricted. A name
/// with at least one rule may touch only what its rules grant; a name with none keeps the whole tree; a
/// name the file does not mention keeps today's behaviour (either kind, the whole tree).
enum RulesFile {
    /// Reads and parses the file at `path` (at most ``TokenFile/bytesMax``, as a token file).
    static func load(path: String, names: Set<String>) throws -> PathRules {
        try parse(try TokenFile.readText(path: path, what: "rules file"), source: path, names: names)
    }

    static func parse(_ text: String, source: String, names: Set<String>) throws -> PathRules {
        var rules = PathRules()
        let text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        for (index, rawLine) in lines.enumerated() {
            let place = "\(source):\(index + 1)"
            // A comment may also end a line: `#` never appears in a kind, a name of a hello or a pattern.
            let content = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = content.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            if fields.isEmpty { continue }
            guard fields.count == 2 || fields.count == 4 else {
                throw TokenFile.Failure(description: "\(place): expected KIND NAME [ACCESS PATTERN]")
            }
            guard let kind = PeerKind(rawValue: fields[0]), kind != .any else {
                throw TokenFile.Failure(description: "\(place): the kind is peer or client, not \(fields[0])")
            }
            let name = fields[1]
            guard names.contains(name) else {
                throw TokenFile.Failure(description: "\(place): \(name) is not an entry of the token file")
            }
            do {
                try rules.setKind(kind, for: name)
                guard fields.count == 4 else { continue }
                let grant: Grant
                switch fields[2] {
                case "read": grant = .read
                case "write": grant = .write
                case "readwrite": grant = .readWrite
                default:
                    throw TokenFile.Failure(
                        description: "\(place): the access is read, write or readwrite, not \(fields[2])")
                }
                try rules.add(try PathRule(grant: grant, pattern: fields[3]), for: name)
            } catch let error as SyncError {
                throw TokenFile.Failure(description: "\(place): \(error.message)")
            }
        }
        return rules
    }
}
