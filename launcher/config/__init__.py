"""Configuration: agent files, the server registry, discovery and selectors."""
