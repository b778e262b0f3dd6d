"""Labels in and out of a workspace: import, merge, export, migrate (one module each).

Each is a function of an open `Workspace`: it reads the workspace's index and
commits its edits as one journal record (store/durable.py). The Workspace keeps
a method of the same name: `ws.import_files(...)`, `ws.merge_files(...)`,
`ws.export(...)`, `ws.migrate(...)`.
"""
