"""Evidence files: canonical JSON, manifest, signing, verification, archive, provenance."""
