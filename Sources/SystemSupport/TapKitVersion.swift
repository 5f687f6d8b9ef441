/// The release both executables and every file they write name: `--version`, HAR's `creator.version`, the live
/// view's HAR download. One place, so they cannot disagree.
public enum TapKitVersion {
    public static let current = "0.2.0"
}
