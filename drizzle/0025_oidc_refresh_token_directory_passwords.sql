ALTER TABLE `users` ADD `oidc_refresh_token_enc` text;--> statement-breakpoint
ALTER TABLE `app_settings` ADD `ldap_directory_passwords_enc` text;