from messaging.management.commands.senddeliveries import Command as SendDeliveries


class Command(SendDeliveries):
    help = "The name senddeliveries had for webhooks: " + SendDeliveries.help
