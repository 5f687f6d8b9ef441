// Reports: renderers for HTTP exchanges (terminal text, NDJSON, HAR).
