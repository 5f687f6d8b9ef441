import Foundation

/// The body of `POST /api/conditioner`: `{"profile": NAME or null, "confirm": Bool}`, read from bytes the client sent.
struct SwitchRequest: Equatable {
    /// nil turns conditioning off.
    var profile: String?
    /// The page's confirmation, needed on an interface.
    var confirm: Bool

    struct Problem: Error, Equatable { var message: String }

    /// The POST body: a JSON object with `profile` (a string, or null for off) and an optional boolean `confirm`.
    static func parse(_ body: [UInt8]) -> Result<SwitchRequest, Problem> {
        let expected = "expected a JSON object like {\"profile\": \"Slow Net\", \"confirm\": false} (profile null turns conditioning off)"
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            return .failure(Problem(message: "the body is not a JSON object: " + expected))
        }
        guard object.keys.contains("profile") else { return .failure(Problem(message: "no \"profile\": " + expected)) }
        let profile: String?
        switch object["profile"] {
        case let name as String: profile = name
        case is NSNull: profile = nil
        default: return .failure(Problem(message: "\"profile\" must be a string or null: " + expected))
        }
        var confirm = false
        if let value = object["confirm"] {
            guard let flag = value as? Bool else {
                return .failure(Problem(message: "\"confirm\" must be true or false"))
            }
            confirm = flag
        }
        return .success(SwitchRequest(profile: profile, confirm: confirm))
    }
}
