"""Keys, sealed and compressed containers, rotation and the rewriting of stored sessions."""
