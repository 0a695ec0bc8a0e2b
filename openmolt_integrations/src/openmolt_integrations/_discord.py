"""Discord's server management tools (channels, members, roles) and the id schemas shared with `discord`.

Constraints are those of Discord's OpenAPI document (``discord/discord-api-spec``, API v10); see
`discord` for how the test suite checks them.
"""

from __future__ import annotations

from openmolt_core.integrations import HttpTool
from openmolt_core.integrations.schema import (
	boolean,
	integer,
	nullable,
	obj,
	passthrough,
	string,
)

__all__ = ["CHANNEL", "GUILD", "GUILD_TOOLS", "SNOWFLAKE"]

# SnowflakeType in the spec: {"type": "string", "pattern": "^(0|[1-9][0-9]*)$", "format": "snowflake"}
SNOWFLAKE = {"pattern": "^(0|[1-9][0-9]*)$"}
CHANNEL = string("Channel or thread id (a snowflake, e.g. 1234567890123456789).", **SNOWFLAKE)
GUILD = string("Server (guild) id (a snowflake).", **SNOWFLAKE)
_ROLE = string("Role id (a snowflake).", **SNOWFLAKE)
_USER = string("User id (a snowflake).", **SNOWFLAKE)
# Channel settings shared by createChannel and updateChannel (CreateGuildChannelRequest and
# UpdateGuildChannelRequestPartial in the spec).
_CHANNEL_SETTINGS = {
	"name": string("Channel name, 1 to 100 characters.", minLength=1, maxLength=100),
	"topic": string("The topic: up to 1024 characters (4096 for forum channels).", maxLength=4096),
	"parent_id": string("Category id to put the channel in (a snowflake).", **SNOWFLAKE),
	"position": integer("Sorting position in the channel list.", minimum=0),
	"nsfw": boolean("Age-restricted channel."),
	"rate_limit_per_user": integer(
		"Slow mode: seconds between messages per user.", minimum=0, maximum=21600
	),
	"bitrate": integer("Voice channels: bitrate in bits per second, from 8000.", minimum=8000),
	"user_limit": integer(
		"Voice channels: user limit, 0 for none (up to 99; stage channels up to 10000).",
		minimum=0,
		maximum=10000,
	),
}


# Channels, members and roles of a server (the manage scope; listing members is read).
GUILD_TOOLS = [
	HttpTool(
		handle="createChannel",
		description="Create a channel in a server: text (type 0), voice (2), category (4), "
		"announcement (5), stage (13) or forum (15). Needs Manage Channels. Returns the channel.",
		scopes=["manage"],
		method="POST",
		endpoint="/guilds/{{ input.guild_id }}/channels",
		body=passthrough("type", *_CHANNEL_SETTINGS),
		input_schema=obj(
			{
				"guild_id": GUILD,
				"type": integer(
					"Channel type: 0 text, 2 voice, 4 category, 5 announcement, 13 stage, 15 forum.",
					enum=[0, 2, 4, 5, 13, 15],
					default=0,
				),
				**_CHANNEL_SETTINGS,
			},
			["guild_id", "name"],
		),
	),
	HttpTool(
		handle="updateChannel",
		description="Change a channel's name, topic, category, position or settings (only the "
		"given fields change). Needs Manage Channels.",
		scopes=["manage"],
		method="PATCH",
		endpoint="/channels/{{ input.channel_id }}",
		body=passthrough(*_CHANNEL_SETTINGS),
		input_schema=obj(
			{
				"channel_id": CHANNEL,
				**_CHANNEL_SETTINGS,
				# ModifyGuildChannel: topic ?string, parent_id ?snowflake.
				"topic": nullable(_CHANNEL_SETTINGS["topic"], "null removes the topic."),
				"parent_id": nullable(
					_CHANNEL_SETTINGS["parent_id"], "null takes the channel out of its category."
				),
			},
			["channel_id"],
		),
	),
	HttpTool(
		handle="deleteChannel",
		description="Delete a server channel (or close a DM). Cannot be undone; a category's "
		"channels stay, without the category. Needs Manage Channels.",
		scopes=["manage"],
		method="DELETE",
		endpoint="/channels/{{ input.channel_id }}",
		input_schema=obj({"channel_id": CHANNEL}, ["channel_id"]),
	),
	HttpTool(
		handle="listGuildMembers",
		description="List a server's members in user id order, one page at a time: pass the "
		"last user id as `after`. Needs the Server Members privileged intent.",
		scopes=["read"],
		method="GET",
		endpoint="/guilds/{{ input.guild_id }}/members",
		query_params=passthrough("after", limit='{{ input["limit"] | default: 100 }}'),
		input_schema=obj(
			{
				"guild_id": GUILD,
				"limit": integer("Members to return.", minimum=1, maximum=1000, default=100),
				"after": string("Members with a user id above this one.", **SNOWFLAKE),
			},
			["guild_id"],
		),
	),
	HttpTool(
		handle="addMemberRole",
		description="Give a server member a role. Needs Manage Roles, and the role must be "
		"below the bot's highest role.",
		scopes=["manage"],
		method="PUT",
		endpoint="/guilds/{{ input.guild_id }}/members/{{ input.user_id }}/roles/{{ input.role_id }}",
		input_schema=obj(
			{"guild_id": GUILD, "user_id": _USER, "role_id": _ROLE},
			["guild_id", "user_id", "role_id"],
		),
	),
	HttpTool(
		handle="removeMemberRole",
		description="Take a role away from a server member. Needs Manage Roles.",
		scopes=["manage"],
		method="DELETE",
		endpoint="/guilds/{{ input.guild_id }}/members/{{ input.user_id }}/roles/{{ input.role_id }}",
		input_schema=obj(
			{"guild_id": GUILD, "user_id": _USER, "role_id": _ROLE},
			["guild_id", "user_id", "role_id"],
		),
	),
]
