# Notification channels.
