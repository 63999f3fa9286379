package session

// Migrations are the schema's migrations, for tests that write a
// database as an older gencode did.
var Migrations = migrations
