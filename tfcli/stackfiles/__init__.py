"""The project's stack files, ``stacks/Pulumi.<stack>.yaml``: what ``pulumi up -s NAME`` deploys, with or without
tfcli. Written when a run is created (whichever backend trains it), read by the GKE backend and by Pulumi. Nothing
here imports Pulumi or talks to the cloud."""
