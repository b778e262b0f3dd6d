"""Labels in and out of a workspace: import, merge, export, migrate (one module each).

Each is a function of an open `Workspace`, which keeps a method of the same name:
`ws.import_files(...)`, `ws.merge_files(...)`, `ws.export(...)`, `ws.migrate(...)`.
"""
