"""textkit: small text utilities (the loopc demo project)."""
