"""People of an organisation in the browser: sign in, refresh, sign out."""
